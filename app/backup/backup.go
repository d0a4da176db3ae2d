// Package backup takes and restores backups of the embedded store (the
// SQLite file DATA_DIR/calendar.db): "eventcal backup" and "eventcal
// restore", the admin routes /admin/backups, and the scheduled backups
// (BACKUP_SCHEDULE, with BACKUP_KEEP of them kept in BACKUP_DIR).
//
// A backup (Write) is a snapshot of the store taken while the service
// serves and writes: SQLite's online backup inside one read transaction
// (sqlite.Store.Backup), written to a temporary file beside the target with
// mode 0600, flushed, then checked (PRAGMA integrity_check, the schema
// version, and the row counts of the copy against those the store held in
// the snapshot's transaction) and only then renamed to its name. The
// search index is not copied: it is derived data, and a service started on
// a restored store fills its empty embedded index from the store.
//
// With MongoDB there is nothing to back up here: every entry point answers
// ErrNotEmbedded, whose message names mongodump and mongorestore.
package backup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/calendar/eventcal/repository/sqlite"
)

// ErrNotEmbedded is the answer of every backup entry point when the store
// is MongoDB.
var ErrNotEmbedded = errors.New("the store is MongoDB (MONGO_URI): back it up with mongodump --oplog on a replica set, " +
	"and restore it with mongorestore --oplogReplay; eventcal backup and restore work on the embedded SQLite store")

// ErrRunning reports that a backup into the same directory is running.
var ErrRunning = errors.New("a backup is already running")

// ErrExists reports that the backup's name is taken (two backups within
// one second).
var ErrExists = errors.New("a backup with this name already exists")

// Result is a backup written and checked.
type Result struct {
	// Name is the file's name; Path its path.
	Name string `json:"name"`
	Path string `json:"-"`
	// Size is the file's size in bytes.
	Size int64 `json:"size"`
	// Created is when the backup was taken.
	Created time.Time `json:"created"`
	// Counts are the rows the backup holds, equal to the store's at the
	// snapshot.
	Counts *sqlite.Counts `json:"counts"`
}

// Write takes a backup of store into path (replacing a file there, once
// the new one is complete and checked); now is its creation time. The
// temporary file beside path is removed on failure.
func Write(ctx context.Context, store *sqlite.Store, path string, now time.Time) (*Result, error) {
	if store == nil {
		return nil, ErrNotEmbedded
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			removeFiles(tmp)
		}
	}()
	if err := errors.Join(f.Chmod(0o600), f.Close()); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	counts, err := store.Backup(ctx, tmp)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	info, err := sqlite.Check(ctx, tmp)
	if err != nil {
		return nil, fmt.Errorf("backup: the copy fails its check: %w", err)
	}
	if !counts.Equal(info.Counts) {
		return nil, fmt.Errorf("backup: the copy's counts differ from the store's at the snapshot: %s", counts.Diff(info.Counts))
	}
	if err := syncFile(tmp); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	ok = true
	if err := syncFile(dir); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	return &Result{Name: filepath.Base(path), Path: path, Size: st.Size(), Created: now.UTC(), Counts: counts}, nil
}

// syncFile flushes a file (or a directory's entries) to disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// removeFiles removes a database file and the journals SQLite may have
// left beside it.
func removeFiles(path string) {
	for _, suffix := range []string{"", "-journal", "-wal", "-shm"} {
		_ = os.Remove(path + suffix)
	}
}

// Names of the backups a Dir writes: namePrefix, the UTC time in
// nameLayout, nameSuffix (eventcal-20261127T081500Z.db). Only such files
// are listed and pruned.
const (
	namePrefix = "eventcal-"
	nameLayout = "20060102T150405Z"
	nameSuffix = ".db"
)

// Name is the name of a backup taken at t.
func Name(t time.Time) string {
	return namePrefix + t.UTC().Format(nameLayout) + nameSuffix
}

// parseName returns the time a backup's name holds; false for a name Name
// did not make.
func parseName(name string) (time.Time, bool) {
	stamp, ok := strings.CutPrefix(name, namePrefix)
	if !ok {
		return time.Time{}, false
	}
	stamp, ok = strings.CutSuffix(stamp, nameSuffix)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(nameLayout, stamp)
	if err != nil || Name(t) != name {
		return time.Time{}, false
	}
	return t, true
}

// Entry is a backup in a Dir.
type Entry struct {
	Name    string    `json:"name"`
	Size    int64     `json:"size"`
	Created time.Time `json:"created"`
}

// Dir is the backup directory (BACKUP_DIR): backups named by the time they
// were taken (Name), at most one at a time, and the retention of the
// newest Keep.
type Dir struct {
	// Path is the directory; it is created with the first backup.
	Path string
	// Store is the embedded store; nil (MongoDB) answers ErrNotEmbedded.
	Store *sqlite.Store
	// Keep is how many backups Prune keeps (BACKUP_KEEP); 0 keeps all.
	Keep int
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	running sync.Mutex
}

// now is the clock's time.
func (d *Dir) now() time.Time {
	if d.Now == nil {
		return time.Now()
	}
	return d.Now()
}

// Create takes a backup into the directory, named for the time now. A
// backup already running answers ErrRunning; a name taken, ErrExists.
func (d *Dir) Create(ctx context.Context) (*Result, error) {
	if d.Store == nil {
		return nil, ErrNotEmbedded
	}
	if !d.running.TryLock() {
		return nil, ErrRunning
	}
	defer d.running.Unlock()
	now := d.now().UTC().Truncate(time.Second)
	path := filepath.Join(d.Path, Name(now))
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrExists, Name(now))
	}
	return Write(ctx, d.Store, path, now)
}

// List returns the directory's backups, newest first (none when the
// directory does not exist). Files of other names are left out.
func (d *Dir) List() ([]Entry, error) {
	if d.Store == nil {
		return nil, ErrNotEmbedded
	}
	des, err := os.ReadDir(d.Path)
	if errors.Is(err, os.ErrNotExist) {
		return []Entry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	out := []Entry{}
	for _, de := range des {
		created, ok := parseName(de.Name())
		if !ok || !de.Type().IsRegular() {
			continue
		}
		fi, err := de.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, Entry{Name: de.Name(), Size: fi.Size(), Created: created})
	}
	slices.SortFunc(out, func(a, b Entry) int { return b.Created.Compare(a.Created) })
	return out, nil
}

// Prune removes the oldest backups beyond Keep and returns their names.
func (d *Dir) Prune() ([]string, error) {
	if d.Keep <= 0 {
		return nil, nil
	}
	entries, err := d.List()
	if err != nil || len(entries) <= d.Keep {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries[d.Keep:] {
		if err := os.Remove(filepath.Join(d.Path, e.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, e.Name)
	}
	return removed, errors.Join(errs...)
}

// Scheduled takes a backup (Create), then prunes the oldest beyond Keep:
// the scheduled job (BACKUP_SCHEDULE).
func (d *Dir) Scheduled(ctx context.Context) (*Result, []string, error) {
	res, err := d.Create(ctx)
	if err != nil {
		return nil, nil, err
	}
	removed, err := d.Prune()
	return res, removed, err
}

// randomSuffix returns a short random hex string for temporary names.
func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
