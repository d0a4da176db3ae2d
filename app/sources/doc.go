// Package sources imports other calendars on a schedule: editors
// register a source (an iCalendar feed, or a site running The Events
// Calendar, by its REST root), and each run of it reads the feed and
// writes its events into the calendar, keeping them current.
//
// # Reading
//
// A Reader reads a source into a feed.Calendar (package
// app/sources/feed: one shape whatever the format). NewReader fetches
// the source (package app/sources/fetch: conditional GET, size and time
// limits, the address rules) and decodes it by the source's format:
// "ics" (package app/sources/ics), "tec" (package app/sources/tec), or
// "auto", which decides from what the fetch returned (an iCalendar
// body; a TEC REST root or a WordPress page announcing its REST API;
// anything else is "not a calendar"). A failed read (an
// HTTP status, not a calendar, truncated, too large, timed out, too many
// events) fails the run and changes nothing.
//
// # Running
//
// A Runner runs a source: Start (the API: the run goes on in the
// background) or Run (the scheduler and the command line: to its end).
// One run per source at a time, across processes: a run claims its
// source (Source.RunClaim, set by compare-and-swap), renews the claim
// while it goes on and clears it at the end; a claim left by a process
// that died lapses, and the next run takes it over and marks the dead
// run failed ("interrupted"). Each run is recorded (SourceRun: its
// status, counts, error and the problems of the events it could not
// import); a source keeps its newest repository.MaxRunsKept runs.
//
// # Writing
//
// Every event is written through the calendar (package app/calendar), as
// the system (calendar.Operator), with the source's author, and carries
// a repository.SourceLink: the source, the feed's UID (plus the
// RECURRENCE-ID of a lone changed instance) and a digest of the feed's
// event (feed.Event.Digest). A run writes only what changed:
//
//   - an event new to the source is created with the source's status
//     (draft by default: nothing appears publicly before an editor
//     publishes it);
//   - an event whose digest equals its link's is unchanged and not
//     written (so an editor's change stays until the feed changes the
//     event); a 304 answer, or a body with the digest of the last
//     successful run, leaves every event unchanged;
//   - a changed event gets the feed's fields (title, description,
//     website, dates, time zone, recurrence and its changed occurrences,
//     venue, organizer, categories, tags, cost, cancellation); its
//     status is kept, except that a trashed event that is back in the
//     feed is restored to the source's status;
//   - an event that left the feed is trashed (on_removed "trash") or
//     left as it is ("keep"), and counted removed once;
//   - an event the calendar refuses (a rule it does not take, an end
//     before the start) is counted failed with the calendar's reason;
//     the rest of the feed still imports.
//
// The mapping: categories are the feed's, by name (found or created),
// then the source's; tags likewise (iCalendar has none; a TEC site names
// them). LOCATION names a venue: an
// existing venue of that name is linked as it is, else one is created
// with the feed's address; ORGANIZER likewise. Floating times and dates
// are read in the site's zone; an all-day event runs from its first day
// at 00:00:00 to its last at 23:59:59. RRULE, EXDATE and RDATE become
// the series' recurrence; each changed instance (RECURRENCE-ID) becomes
// an occurrence change of the series (a cancelled one: its event status
// "canceled", still listed); a cancelled single event gets the event
// status "canceled". Descriptions are plain text, stored HTML-escaped
// with their line breaks as <br>.
//
// Writes are paced (RunnerDeps.WritesPerSecond) so that a large run
// leaves the store to the readers between its writes. Webhooks need
// nothing of this package: every write records its index mark, which
// the dispatcher turns into messages. The runner's metrics are
// eventcal_source_runs_total{outcome}, eventcal_source_events_total{result}
// and eventcal_source_run_seconds.
package sources
