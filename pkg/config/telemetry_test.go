package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clearOTelEnv unsets the OTEL_* variables the tracing defaults read, so a
// developer's environment cannot change the outcome.
func clearOTelEnv(t *testing.T) {
	for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_SERVICE_NAME"} {
		t.Setenv(k, "")
	}
}

func TestTracingIsOffByDefaultWithDefaults(t *testing.T) {
	clearOTelEnv(t)
	c, err := Parse([]byte(okBackend+"name: gw\n"), "ok.yaml")
	require.NoError(t, err)
	tr := c.Telemetry.Tracing
	assert.False(t, tr.Enabled)
	assert.Equal(t, ProtocolHTTPProtobuf, tr.Protocol)
	assert.Equal(t, "gw", tr.ServiceName, "service_name defaults to name")
	require.NotNil(t, tr.SampleRatio)
	assert.Equal(t, 1.0, *tr.SampleRatio)
}

func TestTracingKeysFromFileBeatEnvironment(t *testing.T) {
	clearOTelEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_SERVICE_NAME", "from-env")
	c, err := Parse([]byte(okBackend+"telemetry:\n  tracing:\n    enabled: true\n    endpoint: http://collector:4318\n    sample_ratio: 0\n    service_name: from-file\n"), "ok.yaml")
	require.NoError(t, err)
	tr := c.Telemetry.Tracing
	assert.True(t, tr.Enabled)
	assert.Equal(t, "http://collector:4318", tr.Endpoint)
	assert.Equal(t, ProtocolGRPC, tr.Protocol, "unset in the file: from OTEL_EXPORTER_OTLP_PROTOCOL")
	assert.Equal(t, "from-file", tr.ServiceName)
	assert.Equal(t, 0.0, *tr.SampleRatio, "an explicit 0 is kept")
}

func TestTracingEnabledByOTelTracesExporter(t *testing.T) {
	clearOTelEnv(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	c, err := Parse([]byte(okBackend), "ok.yaml")
	require.NoError(t, err)
	assert.True(t, c.Telemetry.Tracing.Enabled)

	t.Setenv("OTEL_SDK_DISABLED", "true")
	c, err = Parse([]byte(okBackend+"telemetry:\n  tracing:\n    enabled: true\n"), "ok.yaml")
	require.NoError(t, err)
	assert.False(t, c.Telemetry.Tracing.Enabled, "OTEL_SDK_DISABLED wins")
}

func TestTracingProblemsNameTheirLine(t *testing.T) {
	clearOTelEnv(t)
	for _, tt := range []struct {
		name, src, key string
		line           int
		msg            string
	}{
		{"protocol", "telemetry:\n  tracing:\n    protocol: http/json\n", "telemetry.tracing.protocol", 6, `"http/json"`},
		{"endpoint", "telemetry:\n  tracing:\n    endpoint: collector:4318\n", "telemetry.tracing.endpoint", 6, "absolute http or https URL"},
		{"ratio", "telemetry:\n  tracing:\n    sample_ratio: 1.5\n", "telemetry.tracing.sample_ratio", 6, "between 0 and 1"},
		{"unknown key", "telemetry:\n  tracing:\n    exporter: otlp\n", "telemetry.tracing.exporter", 6, "unknown key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ps := problemsOf(t, okBackend+tt.src)
			require.Len(t, ps, 1, "problems: %v", ps)
			assert.Equal(t, tt.key, ps[0].Key)
			assert.Equal(t, tt.line, ps[0].Line)
			assert.Contains(t, ps[0].Msg, tt.msg)
		})
	}
}

func TestTracingProtocolFromEnvironmentIsValidated(t *testing.T) {
	clearOTelEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json")
	ps := problemsOf(t, okBackend)
	require.Len(t, ps, 1)
	assert.Equal(t, "telemetry.tracing.protocol", ps[0].Key)
	assert.Contains(t, ps[0].Msg, "OTEL_EXPORTER_OTLP_PROTOCOL")
}
