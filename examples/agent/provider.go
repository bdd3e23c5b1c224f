package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/ctxfit/ctxfit/openaifit"
)

// Circuit breaker of the provider: 3 consecutive failures open it for
// 60 s.
const (
	providerBreakerFailures = 3
	providerBreakerOpen     = 60 * time.Second
)

// provider calls an OpenAI-compatible chat-completions API at a base URL
// (https://api.openai.com/v1, http://localhost:11434/v1, ...).
type provider struct {
	base    string
	key     string
	client  *http.Client
	breaker *gobreaker.CircuitBreaker[*openaifit.ChatResponse]
}

func newProvider(base, key string, timeout time.Duration) *provider {
	return &provider{
		base:   strings.TrimSuffix(base, "/"),
		key:    key,
		client: &http.Client{Timeout: timeout},
		breaker: gobreaker.NewCircuitBreaker[*openaifit.ChatResponse](gobreaker.Settings{
			Name:        "provider",
			MaxRequests: 1,
			Timeout:     providerBreakerOpen,
			ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= providerBreakerFailures },
			IsSuccessful: func(err error) bool {
				var pe *providerError
				return err == nil || errors.As(err, &pe) && pe.status < 500 && pe.status != http.StatusTooManyRequests
			},
		}),
	}
}

// providerError is a provider's answer other than 200.
type providerError struct {
	status int
	detail openaifit.ErrorDetail
}

func (e *providerError) Error() string {
	return fmt.Sprintf("the provider answered %d: %s", e.status, e.detail.Message)
}

// chat sends one chat-completions request.
func (p *provider) chat(ctx context.Context, req openaifit.ChatRequest) (*openaifit.ChatResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	return p.breaker.Execute(func() (*openaifit.ChatResponse, error) {
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/chat/completions", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		hr.Header.Set("Content-Type", "application/json")
		if p.key != "" {
			hr.Header.Set("Authorization", "Bearer "+p.key)
		}
		resp, err := p.client.Do(hr)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			var eb openaifit.ErrorBody
			if json.Unmarshal(data, &eb) != nil || eb.Error.Message == "" {
				eb.Error.Message = strings.TrimSpace(string(data[:min(len(data), 300)]))
			}
			return nil, &providerError{status: resp.StatusCode, detail: eb.Error}
		}
		var out openaifit.ChatResponse
		if err := json.Unmarshal(data, &out); err != nil {
			return nil, fmt.Errorf("the provider's answer is not a chat completion: %w", err)
		}
		if len(out.Choices) == 0 {
			return nil, errors.New("the provider's answer has no choices")
		}
		return &out, nil
	})
}
