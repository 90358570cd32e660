package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/psdlearn/psdlearn/internal/input"
)

// The checks every command line passes through after parsing (parseFlags),
// before any work: the classes of flag values no command can use, and the
// output paths. Command-specific ranges stay with the commands.

// maxIntFlag is the largest magnitude an integer flag takes (2³¹ − 1):
// iteration caps, counts and sizes beyond it describe runs no machine
// finishes, and products of them with other counts must not overflow.
const maxIntFlag = math.MaxInt32

// minNormal is the smallest positive normal float64 (about 2.2e-308).
const minNormal = 0x1p-1022

// checkFlagValues refuses, as usage errors, the values of the flags given
// on the command line that are wrong whatever the command: a float that is
// NaN, infinite or subnormal (a nonzero number below 2.2e-308, which
// underflows every computation it enters), an integer beyond ±maxIntFlag,
// and a string holding a control character. Then it checks that every
// output path (--out, --plot, embed's --model) can be written, so that a
// run is not lost at its end (that error exits 1, as an unwritable file
// does).
func checkFlagValues(cmd string, fset *flag.FlagSet) error {
	var err error
	fset.Visit(func(f *flag.Flag) {
		if err != nil {
			return
		}
		g, ok := f.Value.(flag.Getter)
		if !ok {
			return
		}
		switch v := g.Get().(type) {
		case float64:
			switch {
			case math.IsNaN(v) || math.IsInf(v, 0):
				err = usagef("%s: --%s %v: want a finite number", cmd, f.Name, v)
			case v != 0 && math.Abs(v) < minNormal:
				err = usagef("%s: --%s %v: a subnormal number (below %.3g in magnitude) underflows the computation it enters; give 0 or a normal number", cmd, f.Name, v, minNormal)
			}
		case int:
			if v > maxIntFlag || v < -maxIntFlag {
				err = usagef("%s: --%s %d: beyond the largest value an integer flag takes (%d)", cmd, f.Name, v, maxIntFlag)
			}
		case int64:
			if v > maxIntFlag || v < -maxIntFlag {
				err = usagef("%s: --%s %d: beyond the largest value an integer flag takes (%d)", cmd, f.Name, v, maxIntFlag)
			}
		case string:
			if !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				err = usagef("%s: --%s %s: holds a control character or invalid UTF-8", cmd, f.Name, input.Clip(v, 40))
			}
		}
	})
	if err != nil {
		return err
	}
	for _, name := range []string{"out", "plot", "model"} {
		f := fset.Lookup(name)
		if f == nil || f.Value.String() == "" || f.Value.String() == stdoutName || name == "model" && cmd != "embed" {
			continue // --model is an output of embed only
		}
		dir := name == "plot" && cmd != "embed" // embed's --plot is a PNG file, the others' a directory
		if err := checkWritable(f.Value.String(), dir); err != nil {
			return fmt.Errorf("%s: --%s %w (nothing was run)", cmd, name, err)
		}
	}
	return nil
}

// checkWritable reports whether path can be written: as a file (its
// directory exists and takes a new file; an existing file is writable and
// not a directory) or, with dir, as a directory (it exists and takes a new
// file, or its nearest existing ancestor does, so that it can be created).
// It leaves no trace: a probe file is removed at once.
func checkWritable(path string, dir bool) error {
	show := input.Clip(path, 80)
	st, err := os.Stat(path)
	switch {
	case err == nil && dir && !st.IsDir():
		return fmt.Errorf("%s: exists and is not a directory", show)
	case err == nil && dir:
		return probeDir(path, show)
	case err == nil && st.IsDir():
		return fmt.Errorf("%s: is a directory, want a file name", show)
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return fmt.Errorf("%s: cannot be written (%v)", show, unwrapPath(err))
		}
		return f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %v", show, unwrapPath(err))
	}
	parent := filepath.Dir(path)
	if dir {
		for {
			if _, err := os.Stat(parent); err == nil || parent == filepath.Dir(parent) {
				break
			}
			parent = filepath.Dir(parent)
		}
	}
	pst, err := os.Stat(parent)
	switch {
	case err != nil:
		return fmt.Errorf("%s: the directory %s does not exist", show, input.Clip(parent, 80))
	case !pst.IsDir():
		return fmt.Errorf("%s: %s is not a directory", show, input.Clip(parent, 80))
	}
	return probeDir(parent, show)
}

// probeDir checks that a file can be created in dir.
func probeDir(dir, show string) error {
	f, err := os.CreateTemp(dir, ".psdlearn-write-check-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write in the directory %s (%v)", show, input.Clip(dir, 80), unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}

// unwrapPath returns the cause of a *fs.PathError (the path is shown
// already).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
