package papers

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"
)

// statusMark is the short mark of a status in the tables.
var statusMark = map[Status]string{
	Reproduced: "✓", Explained: "explained", Open: "**open**", NoFigure: "", Skipped: "skipped", Failed: "**failed**",
}

// CellText formats a cell for the tables: the paper's figure (its SD), →
// psdlearn's mean (SD), the difference in standard errors, the status, and
// the paper's and psdlearn's time per run, e.g.
// "3.85 (4.44) → 4.07 (3.68), +0.1 SE ✓; < 1 s → 2.3 s".
func CellText(c Cell) string {
	var sb strings.Builder
	if c.Paper.Known() {
		sb.WriteString(fmtErr(c.Paper.Mean, c.Paper.SD))
	} else {
		sb.WriteString("–")
	}
	switch c.Status {
	case Skipped, Failed:
		sb.WriteString(" → " + statusMark[c.Status])
		return sb.String()
	}
	fmt.Fprintf(&sb, " → %s", fmtErr(c.Mean, c.SD))
	if !math.IsNaN(c.Z) {
		fmt.Fprintf(&sb, ", %+.1f SE", c.Z)
	}
	if m := statusMark[c.Status]; m != "" {
		sb.WriteString(" " + m)
	}
	if c.Paper.Time != "" {
		fmt.Fprintf(&sb, "; %s → %s", c.Paper.Time, fmtSeconds(c.Seconds))
	} else {
		fmt.Fprintf(&sb, "; %s", fmtSeconds(c.Seconds))
	}
	return sb.String()
}

func fmtErr(mean, sd float64) string {
	if math.IsNaN(sd) {
		return fmt.Sprintf("%.2f", mean)
	}
	return fmt.Sprintf("%.2f (%.2f)", mean, sd)
}

// Markdown writes the tables: per section a title, its introduction, a
// table of rows × columns (CellText), a count of the statuses, the notes
// explaining the cells that are not reproduced, the open cells and the
// skipped columns. machine describes where the tables were measured.
func Markdown(w io.Writer, tables []*Table, machine string) error {
	var sb strings.Builder
	for _, t := range tables {
		fmt.Fprintf(&sb, "## %s\n\n%s\n\n", t.Title, t.Intro)
		if machine != "" {
			fmt.Fprintf(&sb, "Measured on %s. Each cell: the paper's figure (its standard deviation over its runs) → psdlearn's mean (standard deviation) over the same number of runs, the difference in standard errors, ✓ when reproduced (within the larger of the paper's standard deviation and one standard error of the test set); then the paper's time → psdlearn's mean wall time per run (preprocessing, triplets, training, evaluation).\n\n", machine)
		}
		sb.WriteString("| method |")
		for _, c := range t.Columns {
			fmt.Fprintf(&sb, " %s |", c)
		}
		sb.WriteString("\n|---|")
		for range t.Columns {
			sb.WriteString("---|")
		}
		sb.WriteString("\n")
		for _, r := range t.Rows {
			fmt.Fprintf(&sb, "| %s |", r)
			for _, col := range t.Columns {
				if c := t.Cell(r, col); c != nil {
					fmt.Fprintf(&sb, " %s |", CellText(*c))
				} else {
					sb.WriteString(" |")
				}
			}
			sb.WriteString("\n")
		}
		counts := map[Status]int{}
		for _, c := range t.Cells {
			counts[c.Status]++
		}
		var parts []string
		for _, s := range []Status{Reproduced, Explained, Open, Failed, Skipped, NoFigure} {
			if counts[s] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
			}
		}
		fmt.Fprintf(&sb, "\n%d cells: %s.\n", len(t.Cells), strings.Join(parts, ", "))
		for _, n := range t.Notes {
			fmt.Fprintf(&sb, "\n%s\n", n)
		}
		var expl, open []string
		for _, c := range t.Cells {
			switch c.Status {
			case Explained:
				expl = append(expl, fmt.Sprintf("- **%s, %s** (%s → %s): %s", c.Row, c.Column, fmtErr(c.Paper.Mean, c.Paper.SD), fmtErr(c.Mean, c.SD), c.Note))
			case Open:
				open = append(open, fmt.Sprintf("- %s, %s: %s → %s, %+.1f SE", c.Row, c.Column, fmtErr(c.Paper.Mean, c.Paper.SD), fmtErr(c.Mean, c.SD), c.Z))
			case Failed:
				open = append(open, fmt.Sprintf("- %s, %s: failed: %s", c.Row, c.Column, c.Error))
			}
		}
		if len(expl) > 0 {
			fmt.Fprintf(&sb, "\n### Cells that differ, and why\n\n%s\n", strings.Join(expl, "\n"))
		}
		if len(open) > 0 {
			fmt.Fprintf(&sb, "\n### Open cells\n\n%s\n", strings.Join(open, "\n"))
		}
		if len(t.Skipped) > 0 {
			keys := make([]string, 0, len(t.Skipped))
			for k := range t.Skipped {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			sb.WriteString("\n### Skipped\n\n")
			for _, k := range keys {
				fmt.Fprintf(&sb, "- %s: %s\n", k, t.Skipped[k])
			}
		}
		sb.WriteString("\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// WriteMarkdown writes the result's sections in page order: each table
// section's tables (Markdown) and each report section's report. With
// missing, a section the result does not hold gets its title and the
// command that measures it, so that a page merged from partial runs says
// what it lacks.
func WriteMarkdown(w io.Writer, r *Result, missing bool) error {
	for _, s := range Sections() {
		if s.RunReport != nil {
			rep, ok := r.Reports[s.Key]
			var err error
			switch {
			case ok:
				err = rep.Markdown(w)
				if err == nil {
					_, err = io.WriteString(w, "\n")
				}
			case missing:
				err = writeMissing(w, s)
			}
			if err != nil {
				return err
			}
			continue
		}
		var tables []*Table
		for _, t := range r.Tables {
			if t.Section == s.Key {
				tables = append(tables, t)
			}
		}
		var err error
		switch {
		case len(tables) > 0:
			if err = Markdown(w, tables, r.Machine); err == nil {
				err = writePlotLinks(w, r.Plots, "papers-"+s.Key+".png")
			}
		case missing:
			err = writeMissing(w, s)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writePlotLinks links the plots among plots named name (Plot's files),
// relative to the page in the plots' parent directory (docs/plots/x.png
// is plots/x.png from docs/papers.md).
func writePlotLinks(w io.Writer, plots []string, name string) error {
	for _, p := range plots {
		if filepath.Base(p) != name {
			continue
		}
		link := filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(p)), name))
		if _, err := fmt.Fprintf(w, "![%s](%s)\n\n", name, link); err != nil {
			return err
		}
	}
	return nil
}

// writeMissing writes the title of a section a page lacks and how to add it.
func writeMissing(w io.Writer, s Section) error {
	_, err := fmt.Fprintf(w, "## %s\n\nNot measured for this page: none of the outputs it was generated from holds this section. Measure it with `psdlearn bench --suite papers --section %s --json > %s.json` and add that file to --from.\n\n", s.Title, s.Key, s.Key)
	return err
}

// Page writes the whole generated page (docs/papers.md): a title, how it
// was generated (command) and every section in order (WriteMarkdown, with
// the sections the result lacks named).
func Page(w io.Writer, r *Result, command string) error {
	head := fmt.Sprintf(`# The papers' tables on their own protocols

This page is generated by %s; do not edit it by hand. It sets the figures
the papers publish next to psdlearn's on the same protocol, in three
sections: the metric-learning table of BoostMetric and FrobMetric (their
Table 1); the semidefinite programs of MVU, NPKL and PSDBoost solved by
psdlearn and by the interior-point solver CSDP, next to the papers' speed
claims; and SimpleNPKL's Table 2 with its Figure 2.

psdlearn bench --suite papers runs all three; --section table1, sdp or
table2 runs one; --column and --row (keys or names, comma-separated) rerun
cells of Table 1, e.g. psdlearn bench --suite papers --column wine --row
frobmetric. --json prints every run (the values of C tried, iterations,
certificates, warnings), --plot DIR draws each table as paper against
psdlearn and the sections' figures, and --from merges earlier --json
outputs, also those of --suite sdp and --suite table2, into this page
without running anything; --docs writes the page's own record beside it
(papers.json), and a rerun cell's --json output given to --from after that
record replaces the cell (--from docs/papers.json,cell.json). Wall times
are those of the machines named in each section, one run at a time.

`, "`"+command+"`")
	if _, err := io.WriteString(w, head); err != nil {
		return err
	}
	return WriteMarkdown(w, r, true)
}
