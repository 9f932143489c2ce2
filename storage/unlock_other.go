//go:build !unix

package storage

import "os"

// unlock is a no-op where bbolt's lock goes with the file handle.
func unlock(*os.File) {}
