// Package values holds the rules for the values of request parameters that
// the service layer (app/calendar) and the importer apply as well as the
// HTTP decoding (app/input): dates and date phrases read once into typed
// values (ReadDate, DateIn, DateProblem), and web and image URLs (WebURL,
// ImageURLExtension). It imports nothing of HTTP: a package below the
// handlers may use it without pulling in Fiber or the request bag.
package values
