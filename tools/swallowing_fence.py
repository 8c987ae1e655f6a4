"""A pymarkdown rule: a code fence that swallows the text after it.

A closing fence may carry nothing but spaces: `` ``` To run the`` does not close the block, which
then runs on, headings and all, to the next bare fence or the end of the file. Reported: a line
inside a fenced block that starts with a fence as long as the block's own (meant to close it,
or to open another block inside it), and a block the end of the file or of its container closed
(it was never closed). A Markdown example that shows a fence is written inside a longer one.
"""

from __future__ import annotations

from typing import cast

from pymarkdown.plugin_manager.plugin_details import PluginDetails
from pymarkdown.plugin_manager.plugin_scan_context import PluginScanContext
from pymarkdown.plugin_manager.rule_plugin import RulePlugin
from pymarkdown.tokens.end_of_stream_token import EndOfStreamToken
from pymarkdown.tokens.fenced_code_block_markdown_token import FencedCodeBlockMarkdownToken
from pymarkdown.tokens.markdown_token import EndMarkdownToken, MarkdownToken
from pymarkdown.tokens.text_markdown_token import TextMarkdownToken


class SwallowingFence(RulePlugin):
    """Reports a fenced code block that does not end where its writer meant it to."""

    def __init__(self) -> None:
        super().__init__()
        self.__fence: FencedCodeBlockMarkdownToken | None = None

    def get_details(self) -> PluginDetails:
        return PluginDetails(
            plugin_name="swallowing-fence",
            plugin_id="RCN001",
            plugin_enabled_by_default=True,
            plugin_description="A code fence swallows the text after it",
            plugin_version="0.1.0",
            plugin_interface_version=1,
        )

    def starting_new_file(self) -> None:
        self.__fence = None

    def next_token(self, context: PluginScanContext, token: MarkdownToken) -> None:
        if token.is_fenced_code_block:
            self.__fence = cast(FencedCodeBlockMarkdownToken, token)
        elif token.is_fenced_code_block_end:
            if self.__fence is not None and cast(EndMarkdownToken, token).was_forced:
                self.report_next_token_error(
                    context, self.__fence, "the fence opened here is never closed"
                )
            self.__fence = None
        elif self.__fence is not None and token.is_text:
            self.__check_text(context, cast(TextMarkdownToken, token))
        elif isinstance(token, EndOfStreamToken):
            self.__fence = None

    def __check_text(self, context: PluginScanContext, token: TextMarkdownToken) -> None:
        assert self.__fence is not None
        fence = self.__fence.fence_character * self.__fence.fence_count
        for delta, line in enumerate(token.token_text.split("\n")):
            if line.lstrip(" ").startswith(fence):
                self.report_next_token_error(
                    context,
                    token,
                    f"'{line.strip()[:40]}' inside a block fenced by {fence}: a closing fence"
                    " takes nothing after it but spaces",
                    line_number_delta=delta,
                )
