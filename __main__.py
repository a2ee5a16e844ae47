"""The Pulumi program: stack config -> nodewright components. Wiring only."""
