"""The library's schema as ordered migrations: index i upgrades user_version i to i + 1."""

# Porter stemming measured +0.06 BM25 MRR on the public set (docs/EVALUATION.md).
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"

# Ordered migrations: index i upgrades user_version i to i + 1. Never edit a shipped one.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE folders (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        paused INTEGER NOT NULL DEFAULT 0,
        added_at REAL NOT NULL
    );
    CREATE TABLE documents (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        path TEXT NOT NULL UNIQUE,
        folder_id INTEGER,
        name TEXT NOT NULL,
        title TEXT,
        kind TEXT,
        size INTEGER,
        mtime REAL,
        content_hash TEXT,
        state TEXT NOT NULL,
        reason TEXT,
        warnings TEXT,
        extractor_version TEXT,
        pipeline_version TEXT,
        model TEXT,
        dims INTEGER,
        pages INTEGER,
        ocr_pages INTEGER,
        ocr_confidence REAL,
        needs_ocr_pages INTEGER,
        chunks INTEGER,
        split_for_window INTEGER,
        header_tokens INTEGER,
        total_tokens INTEGER,
        indexed_at REAL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX documents_state ON documents(state);
    CREATE TABLE texts (doc_id INTEGER PRIMARY KEY, text TEXT NOT NULL);
    CREATE TABLE pages (
        doc_id INTEGER NOT NULL,
        number INTEGER NOT NULL,
        char_from INTEGER NOT NULL,
        char_to INTEGER NOT NULL,
        ocr INTEGER NOT NULL DEFAULT 0,
        ocr_confidence REAL,
        needs_ocr INTEGER NOT NULL DEFAULT 0,
        boxes TEXT,
        PRIMARY KEY (doc_id, number)
    );
    CREATE TABLE chunks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        doc_id INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        section TEXT NOT NULL,
        char_from INTEGER NOT NULL,
        char_to INTEGER NOT NULL,
        page_from INTEGER,
        page_to INTEGER,
        content TEXT NOT NULL,
        text TEXT NOT NULL,
        tokens INTEGER,
        vector BLOB
    );
    CREATE INDEX chunks_doc ON chunks(doc_id);
    CREATE VIRTUAL TABLE chunks_fts USING fts5(text, tokenize = 'porter unicode61 remove_diacritics 2');
    """,
    # 2: removing a folder looks its documents up by folder
    "CREATE INDEX documents_folder ON documents(folder_id);",
    # 3: a passing failure (OCR under load, a time limit) is read again by itself later
    """
    ALTER TABLE documents ADD COLUMN retry_after REAL;
    ALTER TABLE documents ADD COLUMN tries INTEGER NOT NULL DEFAULT 0;
    """,
    # 4: spreadsheets and code cite by their own address (an A1 range, a line range)
    """
    ALTER TABLE chunks ADD COLUMN locator TEXT;
    ALTER TABLE chunks ADD COLUMN symbol TEXT;
    ALTER TABLE chunks ADD COLUMN line_from INTEGER;
    ALTER TABLE chunks ADD COLUMN line_to INTEGER;
    """,
    # 5: each quote's checksum: search verifies a quote without reading its document's
    # whole text (a 45 MB document made every search that touched it read 45 MB per row)
    "ALTER TABLE chunks ADD COLUMN crc INTEGER;",
    # 6: the vectors of a passage's sentences (float16, one after another), for scoring a
    # passage by its best sentence as well as by itself
    "ALTER TABLE chunks ADD COLUMN sentence_vectors BLOB;",
]
SCHEMA_VERSION = len(MIGRATIONS)
