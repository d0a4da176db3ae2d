package embedded

import "syscall"

// dropMapped tells the kernel that the process no longer needs its
// mapping of the size bytes at addr (the start of a bbolt file's
// read-only shared mapping): the pages leave the process's resident set
// and stay in the page cache, and a later read maps them again.
func dropMapped(addr uintptr, size int64) error {
	if size <= 0 {
		return nil
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, addr, uintptr(size), syscall.MADV_DONTNEED); errno != 0 {
		return errno
	}
	return nil
}
