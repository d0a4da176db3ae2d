// Package input reads a request's parameters and body into values the
// handlers can trust: the parameter bag with WordPress's precedence and
// coercions (Bag, NewBag, AsString, AsInt, AsBool...), dates and date
// phrases (ParseDateInRange, DateProblem), the search-text rule and the
// contact-field rules. Its errors are apierr envelopes that name the
// parameter, what was received and what is accepted. It knows nothing of
// roles or the store.
package input
