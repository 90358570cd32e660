package constraints

import (
	"errors"
	"strings"
	"testing"
)

func TestReadDistances(t *testing.T) {
	d, err := ReadDistances(strings.NewReader("i, j, d\r\n3,1,0.5\n\n0,2,2e-1\n3,1,0.5\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if d.N != 4 || len(d.List) != 3 || d.List[0] != (Distance{A: 3, B: 1, D: 0.5}) || d.List[1].D != 0.2 {
		t.Fatalf("got %+v", d)
	}
	for _, c := range []struct {
		text, want string
		n          int
	}{
		{"i,j,y\n0,1,1\n", "line 1", 0},
		{"i,j,d\n0,1\n", "line 2", 0},
		{"i,j,d\n0,1,1\n0,x,1\n", "line 3", 0},
		{"i,j,d\n-2,1,1\n", "negative", 0},
		{"i,j,d\n0,5,1\n", "outside [0,5)", 5},
		{"i,j,d\n1,1,1\n", "itself", 0},
		{"i,j,d\n0,1,-0.1\n", "non-negative", 0},
		{"i,j,d\n0,1,Inf\n", "non-negative", 0},
		{"i,j,d\n", "no distance", 0},
		{"", "empty", 0},
	} {
		_, err := ReadDistances(strings.NewReader(c.text), c.n)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
}
