"""Development tools of attnkit: measures of the checks (variant grid, mutation score). Not in the runtime package."""
