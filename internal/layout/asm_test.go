package layout

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"
)

// vectorReg matches an SSE or AVX register operand.
var vectorReg = regexp.MustCompile(`\b[XYZ]([0-9]|1[0-5])\b`)

// TestAssemblyStaysVEX checks that no assembly function which uses VEX
// (AVX) instructions also uses a legacy SSE instruction on a vector
// register. After 256-bit VEX instructions the upper halves of the Y
// registers are dirty, and a legacy SSE instruction then pays a
// state-transition penalty on many processors: the scalar tails of f32's
// Axpy (MOVSS, MULSS, ADDSS) made the single-precision Laplacian product
// three times slower, and f64's Axpy had the same cause before. Scalar
// work inside such a function uses the VEX forms (VMOVSS, VMULSS, …).
func TestAssemblyStaysVEX(t *testing.T) {
	isAsm := func(name string) bool { return strings.HasSuffix(name, ".s") }
	walkFiles(t, isAsm, func(string) bool { return false }, func(rel, path string) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		type line struct {
			n    int
			text string
		}
		var (
			fn     string
			vex    bool
			legacy []line
		)
		flush := func() {
			if vex {
				for _, l := range legacy {
					t.Errorf("%s:%d: %s: legacy SSE instruction %q in a function that uses VEX instructions: use its VEX form", rel, l.n, fn, l.text)
				}
			}
			vex, legacy = false, nil
		}
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			text := sc.Text()
			if i := strings.Index(text, "//"); i >= 0 {
				text = text[:i]
			}
			text = strings.TrimSpace(text)
			if text == "" || strings.HasPrefix(text, "#") || strings.HasSuffix(text, ":") {
				continue
			}
			if strings.HasPrefix(text, "TEXT ") {
				flush()
				fn = strings.TrimSuffix(strings.TrimSuffix(strings.Fields(text)[1], ","), "(SB)")
				continue
			}
			mnemonic := strings.Fields(text)[0]
			switch {
			case strings.HasPrefix(mnemonic, "V"):
				vex = true
			case vectorReg.MatchString(text):
				legacy = append(legacy, line{n, text})
			}
		}
		flush()
		return sc.Err()
	})
}
