//go:build !linux

package limits

// systemMemory is unknown outside Linux: DefaultMaxMemory falls back to 8 GiB.
func systemMemory() int64 { return 0 }
