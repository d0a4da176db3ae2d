// Package scrape holds what the Prometheus collectors of package indexing
// (index marks and documents) and package webhooks (deliveries) share:
// the bound on the store and engine queries they make while Prometheus
// scrapes them.
package scrape

import "time"

// Timeout bounds the store and engine queries of one scrape.
const Timeout = 2 * time.Second
