package distributed

import "io"

// SetOpenPart replaces the opener of ReadRows with one that wraps each
// rank's files in wrap (a test's counting reader) and returns a function
// that restores it.
func SetOpenPart(wrap func(rank int, r io.ReaderAt) io.ReaderAt) (restore func()) {
	old := openPart
	openPart = func(path string, rank int) (partFile, int64, bool, error) {
		f, size, split, err := old(path, rank)
		if err != nil {
			return nil, 0, false, err
		}
		return struct {
			io.ReaderAt
			io.Closer
		}{wrap(rank, f), f}, size, split, nil
	}
	return func() { openPart = old }
}
