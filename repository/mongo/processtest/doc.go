// Package processtest holds the tests that run the service as separate
// processes on one database: the standalone FerretDB test server
// (mongotest/cmd/ferretdb), the Meilisearch simulator
// (search/meili/meilisim/cmd/meilisim) and several eventcal binaries,
// among them one built from the release before the string-_id layout.
//
// With TEST_MONGO_URI set (as for package mongotest), the replicas share
// that server instead of the standalone FerretDB, e.g. a mongo:8.0
// container. They build binaries and run for a while: go test -short
// skips them.
package processtest
