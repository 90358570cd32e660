// Package datasets bundles the small benchmark data sets psdlearn's tests,
// examples and demo use — iris, wine, glass, sonar, ionosphere, vehicle,
// vowel, diabetes and letters (about 1 MB of embedded CSV; provenance and
// licences in PROVENANCE.md), and balance, generated exactly (Balance) — so
// that they are available without any file. MNIST is not bundled: MNIST
// reads it from the Go module that carries it (see MNISTDir).
//
// Importing the package registers the "builtin" scheme with data, so
// that data.Load("builtin:iris", …) and the command line's --data builtin:iris
// resolve to these sets, and builtin:mnist to MNIST.
package datasets

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"sort"
	"strings"

	"github.com/psdlearn/psdlearn/data"
)

//go:embed *.csv PROVENANCE.md
var files embed.FS

// Provenance is the text of PROVENANCE.md: the source and licence of every set.
var Provenance = mustRead("PROVENANCE.md")

func mustRead(name string) string {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("datasets: " + err.Error())
	}
	return string(b)
}

// generated are the bundled data sets built by code rather than embedded.
var generated = map[string]func() *data.Dataset{"balance": Balance}

// Names returns the names of the bundled data sets (embedded and
// generated), sorted; MNIST, which is not bundled, is not among them.
func Names() []string {
	ents, err := files.ReadDir(".")
	if err != nil {
		panic("datasets: " + err.Error())
	}
	var out []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".csv"); ok {
			out = append(out, n)
		}
	}
	for n := range generated {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Open returns the bundled data set called name (see Names), or MNIST for
// "mnist" (see MNIST). Labels are in the last column; classes are named by
// their labels. Each call returns a fresh copy that the caller may modify.
func Open(name string) (*data.Dataset, error) {
	if gen, ok := generated[name]; ok {
		return gen(), nil
	}
	if name == "mnist" {
		return MNIST(context.Background())
	}
	b, err := files.ReadFile(name + ".csv")
	if err != nil || strings.ContainsAny(name, "/\\.") {
		return nil, fmt.Errorf("datasets: no embedded data set %q (available: %s)", name, strings.Join(Names(), ", "))
	}
	d, err := data.ParseCSV(bytes.NewReader(b), name+".csv", data.LoadOptions{})
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	d.Name = name
	return d, nil
}

func init() {
	data.RegisterScheme("builtin", func(name string, opt data.LoadOptions) (*data.Dataset, error) {
		if opt.LabelCol != "" && opt.LabelCol != "label" && opt.LabelCol != "-1" {
			return nil, fmt.Errorf("datasets: built-in data sets have their label in the last column; --label-col %q does not apply", opt.LabelCol)
		}
		return Open(name)
	})
}
