package papers_test

import (
	"fmt"
	"log"

	"github.com/psdlearn/psdlearn/bench"
	"github.com/psdlearn/psdlearn/bench/papers"
)

// ExampleMergeResults merges an earlier output of `psdlearn bench --suite
// sdp --json` with a later one: the later row of the same problem and data
// replaces the earlier one's, a new row is added, and a null figure reads
// back as NaN.
func ExampleMergeResults() {
	earlier := `{"schema":"psdlearn/bench/v1","csdp":"/usr/bin/csdp","machine":"m","rows":[
		{"problem":"mvu","data":"swissroll:200:1","size":200,"psdlearn_objective":3213.0}]}`
	later := `{"csdp":"/usr/bin/csdp","machine":"m","rows":[
		{"problem":"mvu","data":"swissroll:200:1","size":200,"psdlearn_objective":3213.4},
		{"problem":"mvu","data":"swissroll:2000:1","size":2000,"psdlearn_objective":null}]}`
	var results []*papers.Result
	for _, in := range []string{earlier, later} {
		r, err := papers.ReadResult([]byte(in))
		if err != nil {
			log.Fatal(err)
		}
		results = append(results, r)
	}
	m := papers.MergeResults(results...)
	for _, row := range m.Reports["sdp"].(*bench.SDPReport).Rows {
		fmt.Println(row.Data, row.Objective)
	}
	// Output:
	// swissroll:200:1 3213.4
	// swissroll:2000:1 NaN
}
