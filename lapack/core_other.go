//go:build !amd64

package lapack

// cpuFeatures reports no x86 capabilities on other architectures.
func cpuFeatures() features { return features{} }
