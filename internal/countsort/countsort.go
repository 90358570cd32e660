// Package countsort sorts by small integer keys in linear time: the stable
// counting sort behind the radix sorts that index pairs and Laplacian
// entries (constraints, sparse), which run once per triplet set on one core.
package countsort

// Stable writes the elements of src into dst ordered by key(e), which must
// lie in [0, keys); elements with equal keys keep their order in src. dst
// must be as long as src and must not overlap it. count is scratch of at
// least keys+1 entries (nil: allocated); Stable returns it for reuse.
// Several passes from the least to the most significant key make a radix
// sort.
func Stable[T any](dst, src []T, keys int, key func(T) int, count []int) []int {
	if cap(count) < keys+1 {
		count = make([]int, keys+1)
	}
	count = count[:keys+1]
	clear(count)
	for _, e := range src {
		count[key(e)+1]++
	}
	for c := 1; c <= keys; c++ {
		count[c] += count[c-1]
	}
	for _, e := range src {
		k := key(e)
		dst[count[k]] = e
		count[k]++
	}
	return count
}
