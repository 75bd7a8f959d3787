"""A grounded answer as the Gemini API gives one, for the emulator's script: Google Search
(``web``, its queries, the search suggestions), Google Maps, image search, Vertex AI Search
/ RAG (``retrieved_context``: a web page and a stored document), the segment citations
(``grounding_supports``, one source cited twice) and ``citation_metadata``. Any question
about a capital gets it (``script``), with a file the model names (``display_name``)."""

from __future__ import annotations

from typing import Final

from google.genai import types

from adk_asgi.testing.gemini import Reply, Rule, Script

__all__ = ("ANSWER", "CITATIONS", "GROUNDING", "SUGGESTIONS", "TIMETABLE", "script")

ANSWER: Final = "Lisbon is the capital of Portugal. The tram 28 crosses it."
SUGGESTIONS: Final = (
    '<style>.chip{border:1px solid #ccc}</style><div class="container">'
    '<a class="chip" href="https://www.google.com/search?q=capital+of+portugal">'
    "capital of portugal</a></div>"
)
GROUNDING: Final = types.GroundingMetadata(
    web_search_queries=["capital of portugal"],
    retrieval_queries=["lisbon trams"],
    search_entry_point=types.SearchEntryPoint(rendered_content=SUGGESTIONS),
    grounding_chunks=[
        types.GroundingChunk(
            web=types.GroundingChunkWeb(uri="https://pt.test/lisbon", title="Lisbon")
        ),
        types.GroundingChunk(
            maps=types.GroundingChunkMaps(
                uri="https://maps.google.com/?cid=28", title="Tram 28", place_id="places/28"
            )
        ),
        types.GroundingChunk(
            retrieved_context=types.GroundingChunkRetrievedContext(
                uri="gs://corpus-bucket/guides/trams.pdf",
                title="Tram guide",
                text="Tram 28 runs from Martim Moniz to Campo de Ourique.",
                document_name="projects/p/locations/l/ragCorpora/c/ragFiles/f",
            )
        ),
        types.GroundingChunk(
            retrieved_context=types.GroundingChunkRetrievedContext(
                uri="https://intranet.test/lisbon", title="Lisbon notes"
            )
        ),
        types.GroundingChunk(
            image=types.GroundingChunkImage(
                source_uri="https://photos.test/tram",
                image_uri="https://img.test/tram.jpg",
                title="Tram",
            )
        ),
        types.GroundingChunk(
            web=types.GroundingChunkWeb(uri="https://pt.test/lisbon", title="Lisbon")
        ),
    ],
    grounding_supports=[
        types.GroundingSupport(
            segment=types.Segment(
                start_index=0, end_index=34, text="Lisbon is the capital of Portugal."
            ),
            grounding_chunk_indices=[0, 5],
            confidence_scores=[0.9, 0.8],
        ),
        types.GroundingSupport(
            segment=types.Segment(start_index=35, end_index=58, text="The tram 28 crosses it."),
            grounding_chunk_indices=[1, 2],
        ),
    ],
)
CITATIONS: Final = types.CitationMetadata(
    citations=[
        types.Citation(
            uri="https://wiki.test/Lisbon",
            title="Lisbon",
            start_index=0,
            end_index=34,
            license="CC-BY-SA",
        ),
        types.Citation(start_index=1, end_index=2),  # no source: nothing to show
    ]
)

TIMETABLE: Final = types.Part(
    file_data=types.FileData(
        file_uri="https://files.test/t28.pdf",
        mime_type="application/pdf",
        display_name="Tram 28 timetable.pdf",
    )
)
"""A file the answer comes with, named by its ``display_name``."""


def script() -> Script:
    """The emulator's script: a question about a capital gets the grounded answer."""
    return Script(
        Rule(
            "capital",
            Reply(ANSWER, grounding=GROUNDING, citations=CITATIONS, parts=(TIMETABLE,)),
        )
    )
