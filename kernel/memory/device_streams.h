/*
 * The engine's stream hooks (engine.h) served by the registered device backends:
 * a GPU worker's stream comes from the GPU backend's stream_create, is synchronised
 * with its synchronize and destroyed with its stream_destroy (abi/mxk_abi_device.h).
 * A backend without stream_create gives its workers no stream.
 */
#ifndef MXK_KERNEL_DEVICE_STREAMS_H
#define MXK_KERNEL_DEVICE_STREAMS_H

/**
 * Installs the hooks in the engine (mxki_engine_set_stream_hooks). The backend is
 * looked up when a worker starts, so plugins loaded after this call are served.
 * Called by mxk_init before it starts the engine; idempotent.
 */
void mxki_device_streams_install(void);

#endif /* MXK_KERNEL_DEVICE_STREAMS_H */
