package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/psdlearn/psdlearn/data"
	"gonum.org/v1/gonum/mat"
)

// Importing the package also registers the "swissroll" scheme: the data
// spec swissroll:N[:SEED] opens N points of SwissRoll.
func init() { data.RegisterScheme("swissroll", openSwissRoll) }

// SwissRoll samples n points of the Swiss roll (t cos t, h, t sin t) with
// t = 1.5π(1 + 2s), s ~ U(0, 1), and h ~ U(0, 21), seeded; it returns the
// n×3 points with their intrinsic coordinates t and h. With k = 6
// neighbours, 400 or more points give a neighbourhood graph without short
// circuits between the layers of the roll.
func SwissRoll(n int, seed uint64) (x *mat.Dense, t, h []float64) {
	rng := rand.New(rand.NewPCG(seed, 0x5e11))
	x = mat.NewDense(n, 3, nil)
	t = make([]float64, n)
	h = make([]float64, n)
	for i := 0; i < n; i++ {
		ti := 1.5 * math.Pi * (1 + 2*rng.Float64())
		hi := 21 * rng.Float64()
		x.SetRow(i, []float64{ti * math.Cos(ti), hi, ti * math.Sin(ti)})
		t[i], h[i] = ti, hi
	}
	return x, t, h
}

// openSwissRoll opens "swissroll:N[:SEED]": N points of SwissRoll, the
// label being the decile of the roll's angle t (so that a plot coloured by
// label shows whether the roll was unrolled).
func openSwissRoll(name string, _ data.LoadOptions) (*data.Dataset, error) {
	parts := strings.Split(name, ":")
	if len(parts) > 2 {
		return nil, fmt.Errorf("%w: want swissroll:N or swissroll:N:SEED", data.ErrFormat)
	}
	n, err := strconv.Atoi(parts[0])
	if err != nil || n < 10 || n > 1<<20 {
		return nil, fmt.Errorf("%w: swissroll: %q is not a number of points in [10, 2^20]", data.ErrFormat, parts[0])
	}
	seed := uint64(1)
	if len(parts) == 2 {
		if seed, err = strconv.ParseUint(parts[1], 10, 64); err != nil {
			return nil, fmt.Errorf("%w: swissroll: bad seed %q", data.ErrFormat, parts[1])
		}
	}
	x, t, _ := SwissRoll(n, seed)
	d := &data.Dataset{Name: "swissroll", X: x, Y: make([]int, n)}
	for i := 0; i < 10; i++ {
		d.Classes = append(d.Classes, strconv.Itoa(i))
	}
	for i, v := range t {
		d.Y[i] = min(int(10*(v-1.5*math.Pi)/(3*math.Pi)), 9)
	}
	return d, nil
}
