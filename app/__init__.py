"""The app shell: the CLI, the wiring of components into a service, the HTTP server, demo traffic, logging."""
