module github.com/psdlearn/psdlearn/acceptance

go 1.26.0

require github.com/psdlearn/psdlearn v0.0.0

require (
	golang.org/x/sys v0.50.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
	gonum.org/v1/netlib v0.0.0-20190313105609-8cb42192e0e0 // indirect
)

replace github.com/psdlearn/psdlearn => ../
