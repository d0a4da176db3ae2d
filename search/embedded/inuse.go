package embedded

import (
	"errors"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// InUse reports, with ErrLocked, whether a process holds the index in dir
// open (a running service): it tries the file lock of the live
// generation's event store for lockWait without changing anything. A
// directory without an index is not in use (nil).
func InUse(dir string) error {
	n, err := readManifest(dir)
	if err != nil {
		return err
	}
	path := indexPath(dir, eventsIndex, n)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	db, err := bolt.Open(path, 0o640, &bolt.Options{ReadOnly: true, Timeout: lockWait})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return fmt.Errorf("bleve: %s: %w", path, ErrLocked)
	}
	if err != nil {
		return fmt.Errorf("bleve: open %s: %w", path, err)
	}
	return db.Close()
}
