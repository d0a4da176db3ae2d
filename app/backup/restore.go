package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/calendar/eventcal/repository/sqlite"
	"github.com/calendar/eventcal/search/embedded"
)

// StoreFile is the embedded store's file name in DATA_DIR.
const StoreFile = "calendar.db"

// indexDir is the embedded search index's directory in DATA_DIR.
const indexDir = "index"

// storeEntries are what a DATA_DIR holding a store has: the store, its
// journals, and the embedded index. Restore refuses a DATA_DIR holding
// one of them unless forced, and moves them aside when forced.
var storeEntries = []string{StoreFile, StoreFile + "-wal", StoreFile + "-shm", StoreFile + "-journal", indexDir}

// ErrDataDirInUse reports that DATA_DIR already holds a store (Restore
// without Force).
var ErrDataDirInUse = errors.New("DATA_DIR already holds a store")

// RestoreOptions say where and how Restore restores.
type RestoreOptions struct {
	// DataDir is the embedded store's directory (DATA_DIR).
	DataDir string
	// Force moves a store already in DataDir aside (into
	// DataDir/before-restore-<time>) instead of refusing.
	Force bool
	// Now names the directory the old files are moved into (zero:
	// time.Now).
	Now time.Time
}

// Restored is what Restore did.
type Restored struct {
	// Info is the restored store's schema version and row counts.
	Info *sqlite.FileInfo
	// MovedAside is the directory the old store and index were moved
	// into ("" when there were none).
	MovedAside string
	// Moved lists the names moved there.
	Moved []string
}

// Restore makes the backup file src the store of opts.DataDir. It refuses
// a DataDir that already holds a store (ErrDataDirInUse) unless
// opts.Force, and always one whose embedded index a running process holds
// (embedded.ErrLocked). It copies src beside the store, checks the copy
// (sqlite.Check: an SQLite store of a schema version this program knows,
// intact), moves the old files aside when forced, and renames the copy
// into place. The embedded index is not restored: with the old one moved
// aside (or none), the service fills a new one from the store at its next
// start. src itself is only read.
func Restore(ctx context.Context, src string, opts RestoreOptions) (*Restored, error) {
	st, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file", src, sqlite.ErrNotStore)
	}
	var present []string
	for _, name := range storeEntries {
		if _, err := os.Lstat(filepath.Join(opts.DataDir, name)); err == nil {
			present = append(present, name)
		}
	}
	if len(present) > 0 && !opts.Force {
		return nil, fmt.Errorf("%w (%s in %s): restore into an empty DATA_DIR, or pass --force to move them aside",
			ErrDataDirInUse, strings.Join(present, ", "), opts.DataDir)
	}
	if err := embedded.InUse(filepath.Join(opts.DataDir, indexDir)); err != nil {
		return nil, fmt.Errorf("a process (a running service?) uses DATA_DIR=%s: stop it first: %w", opts.DataDir, err)
	}
	_, err = os.Stat(opts.DataDir)
	newDir := errors.Is(err, os.ErrNotExist)
	if err := os.MkdirAll(opts.DataDir, 0o750); err != nil {
		return nil, err
	}
	tmp := filepath.Join(opts.DataDir, "."+StoreFile+".restore-"+randomSuffix())
	ok := false
	defer func() {
		if !ok {
			removeFiles(tmp)
			if newDir {
				_ = os.Remove(opts.DataDir) // a refusal leaves no DATA_DIR behind
			}
		}
	}()
	if err := copyFile(ctx, src, tmp); err != nil {
		return nil, err
	}
	info, err := sqlite.Check(ctx, tmp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	if err := syncFile(tmp); err != nil {
		return nil, err
	}
	out := &Restored{Info: info}
	if len(present) > 0 {
		now := opts.Now
		if now.IsZero() {
			now = time.Now()
		}
		aside := filepath.Join(opts.DataDir, "before-restore-"+now.UTC().Format(nameLayout))
		if err := os.Mkdir(aside, 0o750); err != nil {
			return nil, fmt.Errorf("move the old store aside: %w", err)
		}
		for _, name := range present {
			if err := os.Rename(filepath.Join(opts.DataDir, name), filepath.Join(aside, name)); err != nil {
				return nil, fmt.Errorf("move the old store aside (moved so far: %s, into %s): %w", strings.Join(out.Moved, ", "), aside, err)
			}
			out.Moved = append(out.Moved, name)
		}
		out.MovedAside = aside
	}
	if err := os.Rename(tmp, filepath.Join(opts.DataDir, StoreFile)); err != nil {
		return nil, err
	}
	ok = true
	return out, syncFile(opts.DataDir)
}

// copyFile copies src to a new file dst (mode 0600), flushed to disk.
func copyFile(ctx context.Context, src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, ctxReader{ctx, in})
	if err == nil {
		err = out.Sync()
	}
	return errors.Join(err, out.Close())
}

// ctxReader is a reader that stops when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
