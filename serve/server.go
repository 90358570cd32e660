package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// NewServer returns an http.Server for h on addr with the timeouts a
// service open to clients it does not control needs: 5 s to send the
// request headers (of at most 64 KiB), 30 s to send the whole request,
// 60 s to take the response, and 2 minutes for an idle keep-alive
// connection. Together with the handler's body limit they bound what one
// slow or hostile client can hold.
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

// Serve serves srv on ln until ctx is done, then shuts down gracefully:
// it stops accepting connections, closes the idle ones, lets the requests
// in progress finish for up to grace, and returns nil. It returns the
// error that stopped serving otherwise, and an error wrapping
// context.DeadlineExceeded when requests were still running after grace
// (their connections are then closed).
func Serve(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err != nil {
		srv.Close()
		err = fmt.Errorf("serve: shutdown: requests still running after %v: %w", grace, err)
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = fmt.Errorf("serve: %w", serr)
	}
	return err
}
