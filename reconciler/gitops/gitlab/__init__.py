"""GitLab, the CI flow's second forge: its REST client (`client`), the adapter the flow calls
(`forge.GitLabForge`), and the pipeline's own jobs (`pipeline`: the child pipeline, the
accounts file a merge request is planned with)."""
