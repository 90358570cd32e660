package model

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"gonum.org/v1/gonum/mat"
)

// ModulePath is the import path of the psdlearn module, whose version
// Provenance records.
const ModulePath = "github.com/psdlearn/psdlearn"

// Provenance records how a model was made, so that a model file can be
// traced back to the code and the data that produced it and evaluated on
// the rows it was not trained on (psdlearn eval uses Split, Seed and
// Data.SHA256 for that). Model files of version 1 have none (nil).
type Provenance struct {
	// Module is the version of the psdlearn module that trained the model
	// (from runtime/debug.ReadBuildInfo), "devel" when unknown, and
	// GoVersion the Go release it was built with (runtime.Version).
	Module, GoVersion string
	// Backend is the numerical engine backend that trained the model
	// ("go", "native", …).
	Backend string
	// Seed is the random seed of the split and of the algorithm.
	Seed uint64
	// Split is the split of Data into training, validation and test rows,
	// spelt as psdlearn train's --split reads it: fractions of a seeded
	// permutation ("0.7,0.15,0.15", seeded by Seed) or row ranges
	// ("rows:10500,4500,5000"). Empty when Data was used whole.
	Split string
	// Data describes the data set as read, before the split; Test, if not
	// nil, a separate test set (psdlearn train --test), in which case Split
	// cuts Data into training and validation rows only.
	Data, Test *DataInfo
	// Created is when the model was made; the zero time (written as no
	// time at all) keeps files reproducible byte for byte.
	Created time.Time
}

// DataInfo identifies a data set: its name (a psdlearn data SPEC such as
// "builtin:iris" or a file name), its size and a hash of its content.
type DataInfo struct {
	Name     string
	Rows     int
	Features int
	// SHA256 is DataSHA256 of the data as read (lower-case hex).
	SHA256 string
}

// NewProvenance returns a Provenance with the module and Go versions of the
// running program, backend and seed, and Created set to now (UTC, whole
// seconds). Set Created to the zero time for a reproducible file.
func NewProvenance(backend string, seed uint64) *Provenance {
	return &Provenance{
		Module: ModuleVersion(), GoVersion: runtime.Version(), Backend: backend, Seed: seed,
		Created: time.Now().UTC().Truncate(time.Second),
	}
}

// ModuleVersion returns the version of the psdlearn module compiled into
// the running program ("v1.2.3", a pseudo-version), or "devel" when the
// build does not know it (a build inside the module's own work tree, tests).
func ModuleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := ""
	if bi.Main.Path == ModulePath {
		v = bi.Main.Version
	} else {
		for _, d := range bi.Deps {
			if d.Path == ModulePath {
				v = d.Version
				if d.Replace != nil {
					v = d.Replace.Version
				}
				break
			}
		}
	}
	if v == "" || v == "(devel)" {
		return "devel"
	}
	return v
}

// DescribeData returns the DataInfo of a data set named name with rows x
// and labels y (indices into classes).
func DescribeData(name string, x mat.Matrix, y []int, classes []string) *DataInfo {
	info := &DataInfo{Name: name, SHA256: DataSHA256(x, y, classes)}
	if x != nil {
		info.Rows, info.Features = x.Dims()
	}
	return info
}

// DataSHA256 returns the SHA-256, in lower-case hex, of a labelled data
// set exactly as read: the ASCII text "psdlearn-data\n"; the row and column
// counts as unsigned 64-bit little-endian integers; every entry of x, row by
// row, as the little-endian bits of its float64; then, if y is not nil, each
// row's label as its class name (classes[y[i]], or the decimal index when it
// is outside classes) preceded by the name's length as a 64-bit
// little-endian integer. Labels count by name, not by index, so re-indexing
// the classes (data.UnifyClasses) does not change the hash; the order of the
// rows does. A nil x hashes as 0×0.
func DataSHA256(x mat.Matrix, y []int, classes []string) string {
	h := sha256.New()
	h.Write([]byte("psdlearn-data\n"))
	var r, c int
	if x != nil {
		r, c = x.Dims()
	}
	buf := make([]byte, 0, 8*max(c, 2))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(r))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(c))
	h.Write(buf)
	rv, raw := x.(mat.RawRowViewer)
	for i := 0; i < r; i++ {
		buf = buf[:0]
		if raw {
			for _, v := range rv.RawRowView(i) {
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
			}
		} else {
			for j := 0; j < c; j++ {
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x.At(i, j)))
			}
		}
		h.Write(buf)
	}
	for _, v := range y {
		name := strconv.Itoa(v)
		if v >= 0 && v < len(classes) {
			name = classes[v]
		}
		buf = binary.LittleEndian.AppendUint64(buf[:0], uint64(len(name)))
		h.Write(buf)
		h.Write([]byte(name))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// dataInfoJSON and provenanceJSON are the file forms.
type dataInfoJSON struct {
	Name     string `json:"name"`
	Rows     int    `json:"rows"`
	Features int    `json:"features"`
	SHA256   string `json:"sha256,omitempty"`
}

type provenanceJSON struct {
	Module    string        `json:"module"`
	GoVersion string        `json:"go"`
	Backend   string        `json:"backend,omitempty"`
	Seed      uint64        `json:"seed"`
	Split     string        `json:"split,omitempty"`
	Data      *dataInfoJSON `json:"data,omitempty"`
	Test      *dataInfoJSON `json:"test,omitempty"`
	Created   string        `json:"created,omitempty"` // RFC 3339, UTC
}

func (d *DataInfo) toJSON() *dataInfoJSON {
	if d == nil {
		return nil
	}
	return &dataInfoJSON{Name: d.Name, Rows: d.Rows, Features: d.Features, SHA256: d.SHA256}
}

func (d *dataInfoJSON) fromJSON(what string) (*DataInfo, error) {
	if d == nil {
		return nil, nil
	}
	if d.Rows < 0 || d.Features < 0 {
		return nil, fmt.Errorf("%w: provenance %s has %d rows and %d features", ErrInvalid, what, d.Rows, d.Features)
	}
	if d.SHA256 != "" {
		if b, err := hex.DecodeString(d.SHA256); err != nil || len(b) != sha256.Size || hex.EncodeToString(b) != d.SHA256 {
			return nil, fmt.Errorf("%w: provenance %s sha256 %q is not 64 lower-case hex digits", ErrInvalid, what, d.SHA256)
		}
	}
	return &DataInfo{Name: d.Name, Rows: d.Rows, Features: d.Features, SHA256: d.SHA256}, nil
}

func (p *Provenance) toJSON() *provenanceJSON {
	if p == nil {
		return nil
	}
	f := &provenanceJSON{Module: p.Module, GoVersion: p.GoVersion, Backend: p.Backend, Seed: p.Seed,
		Split: p.Split, Data: p.Data.toJSON(), Test: p.Test.toJSON()}
	if !p.Created.IsZero() {
		f.Created = p.Created.UTC().Format(time.RFC3339Nano)
	}
	return f
}

func (f *provenanceJSON) fromJSON() (*Provenance, error) {
	if f == nil {
		return nil, nil
	}
	p := &Provenance{Module: f.Module, GoVersion: f.GoVersion, Backend: f.Backend, Seed: f.Seed, Split: f.Split}
	var err error
	if p.Data, err = f.Data.fromJSON("data"); err != nil {
		return nil, err
	}
	if p.Test, err = f.Test.fromJSON("test"); err != nil {
		return nil, err
	}
	if f.Created != "" {
		t, err := time.Parse(time.RFC3339Nano, f.Created)
		if err != nil {
			return nil, fmt.Errorf("%w: provenance created %q is not an RFC 3339 time", ErrInvalid, f.Created)
		}
		p.Created = t.UTC()
	}
	return p, nil
}
