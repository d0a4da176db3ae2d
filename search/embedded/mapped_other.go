//go:build !linux

package embedded

// dropMapped does nothing where the process's resident set is not
// trimmed (see the Linux version).
func dropMapped(uintptr, int64) error { return nil }
