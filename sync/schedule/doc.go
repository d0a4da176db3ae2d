// Package schedule runs the service's periodic jobs with gocron
// (Schedule): full rebuilds of the search indexes on REINDEX_CRON,
// backups of the embedded store on BACKUP_SCHEDULE (backup.go: each run
// takes a backup and removes the oldest beyond BACKUP_KEEP),
// scheduled publishing (every minute by default; publish.go, PublishDue:
// items whose publish date has come change from future to publish, as
// WordPress's scheduled posts do), the daily roll of the recurrence
// horizon (horizon.go, RollHorizon: the index holds a series' occurrences
// up to a horizon ahead of now, so every day the series whose occurrences
// up to it changed are marked for indexing, catching up after a stop),
// and the calendar sources (sources.go): a job per source with a
// schedule, each run through the sources' runner (SourceRunner, trigger
// "schedule"), kept in line with the sources by a job that reads them
// every minute and adds, replaces and removes their jobs.
//
// Sources are spread so that many sharing a schedule do not fire at
// once: an "@every d" source runs on a grid fixed by its ID (an offset
// below d, in whole seconds, from the Unix epoch), the same in every
// replica and after a restart; a cron source ("@hourly", "@daily",
// "@weekly", five fields) runs at each time of its expression (in
// TIMEZONE) plus a fixed delay derived from its ID, below the smaller of
// five minutes and a tenth of the expression's period. A source's job
// runs one run at a time (a tick while its run goes on is skipped), and
// the runner's claim on the source keeps its runs one at a time across
// processes.
//
// How it relates to the other sync packages: it runs rebuilds through
// package sync/indexing (Reindexer) and reads the horizon and time zone
// of its DocBuilder; publishing and the horizon only write to the store,
// whose index marks the indexing worker then takes (Options.Notifier
// wakes it). The jobs run only in the process holding the lease (package
// sync/lease): the lease is the scheduler's elector, and each job checks
// it with the store (lease.CheckFence) right before it writes.
package schedule
