package datasets_test

import (
	"fmt"

	"github.com/psdlearn/psdlearn/data"
	"github.com/psdlearn/psdlearn/datasets"
)

func ExampleOpen() {
	d, err := datasets.Open("iris")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Name, d.Len(), d.Dim(), d.Classes, d.ClassCounts())
	// Output: iris 150 4 [0 1 2] [50 50 50]
}

// The fixed letters split of the protocol, standardised on its training part.
func Example_letters() {
	d, _ := data.Load("builtin:letters", data.LoadOptions{})
	parts, _ := data.SplitRows(d, []int{10500, 4500, 5000})
	pipe, _ := data.FitPipeline(nil, parts[0].X, true, 0)
	train, _ := data.ApplyDataset(pipe, parts[0])
	test, _ := data.ApplyDataset(pipe, parts[2])
	fmt.Println(train.Len(), test.Len(), len(train.Classes))
	// Output: 10500 5000 26
}
