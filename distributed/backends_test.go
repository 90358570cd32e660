package distributed_test

// The tests run on the registered engine backends.
import _ "github.com/psdlearn/psdlearn/engine/backends"
