package serve

// Test helpers for the external tests (the load test imports
// internal/loadtest, which imports this package).
var (
	Clusters  = clusters
	TestModel = testModel
)
