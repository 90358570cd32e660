package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// checkTrailing rejects anything but white space after the model's JSON
// object: a concatenated or truncated-and-appended file is not a model.
func checkTrailing(dec *json.Decoder) error {
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: data after the model's JSON object (byte %d): %v", ErrInvalid, dec.InputOffset(), err)
	}
	return fmt.Errorf("%w: data after the model's JSON object (byte %d): %v", ErrInvalid, dec.InputOffset(), tok)
}
