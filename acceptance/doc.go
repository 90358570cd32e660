// Package acceptance is a program outside the psdlearn module that uses it
// as a Go engineer embedding the library would, through a replace
// directive: its tests are the library's promises seen from outside.
// Run them with `cd acceptance && go test ./...` (make test does).
package acceptance
