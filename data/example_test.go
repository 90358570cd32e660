package data_test

import (
	"fmt"
	"strings"

	"github.com/psdlearn/psdlearn/data"
)

func ExampleParseCSV() {
	in := "height,weight,label\n1.8,80,tall\n1.5,50,short\n1.9,95,tall\n"
	d, err := data.ParseCSV(strings.NewReader(in), "people.csv", data.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Len(), "points,", d.Dim(), "features, classes", d.Classes, "labels", d.Y)

	// Errors name the file, line and column.
	_, err = data.ParseCSV(strings.NewReader("a,label\n1,x\nNaN,y\n"), "bad.csv", data.LoadOptions{})
	fmt.Println(err)
	// Output:
	// 3 points, 2 features, classes [short tall] labels [1 0 1]
	// data: bad.csv:3:1 (column "a"): NaN is not allowed
}

func ExampleParseSplit() {
	for _, s := range []string{"0.7,0.15,0.15", "rows:10500,4500,5000"} {
		spec, err := data.ParseSplit(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: %d parts, fractions %v, rows %v\n", spec, spec.Parts(), spec.Fracs, spec.Rows)
	}
	// Output:
	// 0.7,0.15,0.15: 3 parts, fractions [0.7 0.15 0.15], rows []
	// rows:10500,4500,5000: 3 parts, fractions [], rows [10500 4500 5000]
}

func ExampleSplitSpec_Cut() {
	in := "x,label\n1,a\n2,b\n3,a\n4,b\n5,a\n6,b\n"
	d, err := data.ParseCSV(strings.NewReader(in), "six.csv", data.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	spec, _ := data.ParseSplit("rows:3,2")
	// The parts are views of d's rows, not copies: for data that is not
	// needed whole afterwards.
	parts, err := spec.Cut(d, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range parts {
		fmt.Println(p.X.RawMatrix().Data, p.Y)
	}
	parts[1].X.Set(0, 0, 40)
	fmt.Println("row 3 of d:", d.X.At(3, 0))
	// Output:
	// [1 2 3] [0 1 0]
	// [4 5] [1 0]
	// row 3 of d: 40
}
