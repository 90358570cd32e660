package papers

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/psdlearn/psdlearn/internal/plots"
)

// Plot writes one PNG per table into dir, papers-<section>.png: every cell
// with a published figure and a measurement as a point (paper, psdlearn)
// with psdlearn's standard deviation as a bar, coloured by column, over
// the diagonal of equality. It returns the files written.
func Plot(dir string, tables []*Table) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("papers: %w", err)
	}
	var files []string
	for _, t := range tables {
		a := plots.Agreement{Title: t.Title + ": paper against psdlearn", XLabel: "paper's figure", YLabel: "psdlearn's mean (bar: its standard deviation)"}
		for _, col := range t.Columns {
			g := plots.AgreementGroup{Name: col}
			for _, c := range t.Cells {
				if c.Column != col || !c.Paper.Known() || len(c.Values) == 0 {
					continue
				}
				g.X, g.Y, g.Spread = append(g.X, c.Paper.Mean), append(g.Y, c.Mean), append(g.Spread, c.SD)
			}
			a.Groups = append(a.Groups, g)
		}
		file := filepath.Join(dir, "papers-"+t.Section+".png")
		if err := plots.DrawAgreement(file, a); err != nil {
			return files, fmt.Errorf("papers: %s: %w", t.Section, err)
		}
		files = append(files, file)
	}
	return files, nil
}
