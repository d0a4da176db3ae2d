// Command eventcal is the event-calendar REST service and its administration
// commands; package app implements them ("eventcal help" lists them).
//
// # How it is built
//
//		HTTP (app/api) -> app/handlers -- decode, authorize --> app/calendar (decides, then writes)
//		     |                                                        |
//		     |--item reads--> repository  <---------------------------'  marks "needs indexing"
//		     |                    |                                       in the same write
//		     |                    v
//		     '--lists/search--> search engine <--batches-- sync/indexing worker
//
//	  - app/api: the HTTP layer's composition (Options into a Server, the
//	    middleware: guard, request log, metrics, response cache,
//	    authentication, write rates; compose.go builds the handlers and the
//	    service). A request then passes downwards in one direction:
//	    app/handlers holds the route table (routes.go, every route on one
//	    screen) and one file per resource (posts.go for events, venues and
//	    organizers, one handler type per kind over the shared reads,
//	    occurrences.go, lists.go, feeds.go, terms.go, accounts.go, admin.go,
//	    webhooks.go, index.go, openapi.go). A read handler decides access (app/access: roles,
//	    per-object rules, access.Reader for what a request may see), asks the
//	    store or the search engine and presents the result (app/present:
//	    typed JSON values in the original's field order, JSON-LD, iCalendar,
//	    list envelopes and their caches). A write handler authorizes the
//	    route, decodes the request once into a typed command (decode.go:
//	    calendar.EventInput, TermInput, ...) and calls app/calendar.
//	    Handlers return app/apierr errors; app/api's error handler writes
//	    every error body. Parameters are declared once per route (input.Arg,
//	    next to each handler) and drive validation (input.Validate), the
//	    namespace index and the OpenAPI document.
//	  - app/calendar: the service layer, the one write path of handlers,
//	    occurrence routes and the importer. Each command is validated whole,
//	    store look-ups included, on a trial copy before anything is written;
//	    then linked records, then the record, with an undo log if the last
//	    step fails. Service (events, venues, organizers, occurrences,
//	    splits, imports), Terms, Accounts, Webhooks.
//	  - repository: the domain types and the Store contract, with the engines
//	    repository/sqlite and repository/mongo and one conformance suite
//	    (repository/storetest) that runs against both (MongoDB over embedded
//	    FerretDB in go test ./..., and a real MongoDB when TEST_MONGO_URI is set).
//	  - search: the index contract (documents, query options with explicit
//	    optionals, exact totals), the engines search/embedded and search/meili, and
//	    one conformance suite (search/searchtest) whose expected results are
//	    computed by a reference implementation in Go. The embedded engine
//	    (search/embedded) keeps the event documents in a bbolt file and
//	    answers event queries from search/memindex, an in-memory index loaded
//	    from it at start; Bleve indexes venues and organizers (go doc
//	    ./search/embedded). Meilisearch is checked against a simulator
//	    written from its source (search/meili/meilisim), and by the same
//	    tests against a real server when TEST_MEILI_URL is set
//	    (docs/operators.md, Meilisearch, has the command).
//	  - sync: the work in the background, in packages named for what they do
//	    (none is named sync). sync/indexing is the worker that moves the marks
//	    into the engine, re-reading the store for every batch (it queues IDs,
//	    never documents), and the full rebuilds; sync/webhooks queues a
//	    webhook message per change from the worker's batches and delivers
//	    them; sync/schedule runs the periodic jobs (scheduled rebuilds,
//	    scheduled publishing, the recurrence horizon); sync/lease decides
//	    which of several processes sharing a store runs all of these.
//	  - config: one registry of settings with defaults, types and validators.
//	  - app: the application: the composition root that wires the store, the
//	    engine, the workers and the HTTP layer, and the command line (serve and
//	    the administration commands); main.go at the root only calls it. Every
//	    package under app is below it: none imports app.
//	  - app/calendar/recurrence: the expansion of a series into occurrences.
//	  - app/wpimport: "eventcal import", a client of a WordPress site running
//	    The Events Calendar that writes through app/calendar (no HTTP serving);
//	    app/wpimport/replay serves the recorded exchanges its tests use.
//	  - bench: the load benchmark.
package main

import (
	"os"

	"github.com/calendar/eventcal/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}
