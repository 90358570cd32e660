// Package datasets embeds the small benchmark data sets psdlearn's tests,
// examples and demo use — iris, wine, glass, sonar, ionosphere, vehicle,
// vowel, diabetes and letters (about 1 MB of CSV; provenance and licences in
// PROVENANCE.md) — so that they are available without any file.
//
// Importing the package registers the "builtin" scheme with data, so
// that data.Load("builtin:iris", …) and the command line's --data builtin:iris
// resolve to these copies.
package datasets

import (
	"bytes"
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

// Names returns the names of the embedded data sets, sorted.
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
	sort.Strings(out)
	return out
}

// Open parses the embedded data set called name (see Names). Labels are in
// the last column; classes are named by their labels. Each call returns a
// fresh copy that the caller may modify.
func Open(name string) (*data.Dataset, error) {
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
