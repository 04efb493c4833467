import sys
from pypdf import PdfReader

for page in PdfReader(sys.argv[1]).pages:
    print(f"{{page}}: {page.extract_text()}")
