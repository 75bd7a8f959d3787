"""Grounding: what a model response says it is based on, as the AI SDK shows sources.

Every source of a response's ``grounding_metadata`` and ``citation_metadata`` becomes a
source part of the message, each once (``{messageId}-s{n}``):

- ``web`` (Google Search: no metadata), ``maps`` (Google Maps; ``providerMetadata.adk.placeId``),
  ``image`` (image search: the page it is on) and ``citation_metadata``'s citations:
  ``source-url`` (``providerMetadata.adk.kind`` names the kind);
- ``retrieved_context`` (Vertex AI Search, RAG, file search): ``source-url`` when its URI
  is a web page, else ``source-document`` with its title, file name and the passage
  (``providerMetadata.adk.text``, ``pageNumber``); the store's URIs and document names stay
  on the server.

What else it says goes in one ``data-grounding`` part per response:
``searchQueries`` (``web_search_queries``), ``retrievalQueries``, ``searchEntryPoint`` (the
Google Search suggestions' HTML, ``search_entry_point.rendered_content``, which Google's
terms require the page to show with the answer), ``supports`` (which text segment cites
which sources: ``{text, startIndex, endIndex, partIndex?, sourceIds, confidence?}``) and
``citations`` (``{sourceId, startIndex, endIndex, license?}``).
"""

from __future__ import annotations

import mimetypes
import posixpath
from typing import Any, Final
from urllib.parse import urlsplit

from google.adk.events import Event
from google.genai import types

from ..wire.chunks import DataChunk, SourceDocument, SourceUrl, UIChunk
from .files import browser_url

__all__ = ("GROUNDING_CHUNK_TYPE", "Grounding")

GROUNDING_CHUNK_TYPE: Final = "data-grounding"
"""The type of a response's grounding details (queries, suggestions, supports)."""


class Grounding:
    """The sources and grounding details of one message's responses."""

    __slots__ = ("_message_id", "_sources")

    def __init__(self, message_id: str) -> None:
        self._message_id = message_id
        self._sources: dict[str, str] = {}  # a source's key -> its sourceId

    def record(self, event: Event, out: list[UIChunk]) -> None:
        """The sources of a final model response (new ones only), then its details."""
        grounding, cited = event.grounding_metadata, event.citation_metadata
        ids = [
            self._source(chunk, out) for chunk in (grounding and grounding.grounding_chunks) or ()
        ]
        data: dict[str, Any] = {}
        if grounding is not None:
            if grounding.web_search_queries:
                data["searchQueries"] = list(grounding.web_search_queries)
            if grounding.retrieval_queries:
                data["retrievalQueries"] = list(grounding.retrieval_queries)
            entry = grounding.search_entry_point
            if entry is not None and entry.rendered_content:
                data["searchEntryPoint"] = entry.rendered_content
            supports = [_support(s, ids) for s in grounding.grounding_supports or ()]
            if supports:
                data["supports"] = supports
        citations = [self._citation(c, out) for c in (cited and cited.citations) or ()]
        if any(citations):
            data["citations"] = [c for c in citations if c is not None]
        if data:  # no id: a continued message's next request adds its own part
            out.append(DataChunk(type=GROUNDING_CHUNK_TYPE, data=data))

    def _source(self, chunk: types.GroundingChunk, out: list[UIChunk]) -> str | None:
        if chunk.web is not None and chunk.web.uri:
            return self._url(chunk.web.uri, chunk.web.title, None, out)
        if chunk.maps is not None and chunk.maps.uri:
            adk: dict[str, Any] = {"kind": "maps"}
            if chunk.maps.place_id:
                adk["placeId"] = chunk.maps.place_id
            return self._url(chunk.maps.uri, chunk.maps.title, adk, out)
        if chunk.image is not None and chunk.image.source_uri:
            adk = {"kind": "image"}
            if chunk.image.image_uri and browser_url(chunk.image.image_uri):
                adk["imageUrl"] = chunk.image.image_uri
            return self._url(chunk.image.source_uri, chunk.image.title, adk, out)
        if chunk.retrieved_context is not None:
            return self._document(chunk.retrieved_context, out)
        return None

    def _url(
        self, url: str, title: str | None, adk: dict[str, Any] | None, out: list[UIChunk]
    ) -> str | None:
        if not browser_url(url):
            return None
        known = self._sources.get(url)
        if known is not None:
            return known
        source_id = self._new(url)
        out.append(
            SourceUrl(
                source_id=source_id,
                url=url,
                title=title or None,
                provider_metadata={"adk": adk} if adk else None,
            )
        )
        return source_id

    def _document(
        self, context: types.GroundingChunkRetrievedContext, out: list[UIChunk]
    ) -> str | None:
        uri = context.uri or ""
        if uri and browser_url(uri):
            adk: dict[str, Any] = {"kind": "retrievedContext"}
            if context.text:
                adk["text"] = context.text
            return self._url(uri, context.title, adk, out)
        key = uri or context.document_name or context.title or context.text
        if not key:
            return None
        known = self._sources.get(key)
        if known is not None:
            return known
        filename = posixpath.basename(urlsplit(uri).path) if uri else ""
        media_type = (mimetypes.guess_type(filename)[0] if filename else None) or "text/plain"
        adk = {"kind": "retrievedContext"}
        if context.text:
            adk["text"] = context.text
        if context.page_number:
            adk["pageNumber"] = context.page_number
        source_id = self._new(key)
        out.append(
            SourceDocument(
                source_id=source_id,
                media_type=media_type,
                title=context.title or filename or "Document",
                filename=filename or None,
                provider_metadata={"adk": adk},
            )
        )
        return source_id

    def _citation(self, citation: types.Citation, out: list[UIChunk]) -> dict[str, Any] | None:
        if not citation.uri:
            return None
        source_id = self._url(citation.uri, citation.title, {"kind": "citation"}, out)
        if source_id is None:
            return None
        said: dict[str, Any] = {"sourceId": source_id}
        if citation.start_index is not None:
            said["startIndex"] = citation.start_index
        if citation.end_index is not None:
            said["endIndex"] = citation.end_index
        if citation.license:
            said["license"] = citation.license
        return said

    def _new(self, key: str) -> str:
        source_id = f"{self._message_id}-s{len(self._sources) + 1}"
        self._sources[key] = source_id
        return source_id


def _support(support: types.GroundingSupport, ids: list[str | None]) -> dict[str, Any]:
    segment = support.segment or types.Segment()
    said: dict[str, Any] = {
        "text": segment.text or "",
        "startIndex": segment.start_index or 0,
        "endIndex": segment.end_index or 0,
        "sourceIds": [
            source_id
            for index in support.grounding_chunk_indices or ()
            if 0 <= index < len(ids) and (source_id := ids[index]) is not None
        ],
    }
    if segment.part_index:
        said["partIndex"] = segment.part_index
    if support.confidence_scores:
        said["confidence"] = list(support.confidence_scores)
    return said
