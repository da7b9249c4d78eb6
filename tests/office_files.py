"""Real Office, OpenDocument, e-mail and code files, written with the same libraries
people's tools use (python-docx, openpyxl, python-pptx, odfpy, the email package), each
with a phrase the tests then look for."""

from __future__ import annotations

import io
from email.message import EmailMessage
from pathlib import Path

CODE = '''"""Login helpers."""

import os


class SessionStore:
    """Keeps sessions in memory."""

    def __init__(self):
        self.sessions = {}

    def handleAuthCallback(self, token):
        """Exchange the provider's token for a session."""
        session = {"token": token, "user": os.environ.get("USER")}
        self.sessions[token] = session
        return session

    def revoke(self, token):
        self.sessions.pop(token, None)


def parse_http_url(url):
    scheme, _, rest = url.partition("://")
    return scheme, rest
'''


def make_docx(path: Path) -> Path:
    import docx

    d = docx.Document()
    d.core_properties.title = "Quarterly plan"
    d.add_heading("Quarterly plan", level=0)
    d.add_heading("Budget", level=1)
    d.add_paragraph("The marketing budget for the spring campaign is forty thousand euros.")
    t = d.add_table(rows=3, cols=3)
    for r, row in enumerate([["Item", "Cost", "Owner"], ["Posters", "1200", "Aino"],
                             ["Radio spots", "8800", "Veikko"]]):  # fmt: skip
        for c, v in enumerate(row):
            t.cell(r, c).text = v
    d.add_heading("Risks", level=2)
    d.add_paragraph("Supplier delays could push the launch of the kayak line into June.")
    d.sections[0].header.paragraphs[0].text = "CONFIDENTIAL draft for the board"
    d.save(path)
    return path


def make_xlsx(path: Path) -> Path:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Budget"
    ws.append(["Region", "Quarter", "Revenue"])
    for i in range(60):
        ws.append([f"Region {i}", "Q1", 1000 + i])
    staff = wb.create_sheet("Staff list")
    staff.append(["Name", "Role"])
    staff.append(["Aino", "Accountant"])
    staff.append(["Veikko", "Zookeeper of the penguins"])
    wb.save(path)
    return path


def make_pptx(path: Path) -> Path:
    import pptx

    p = pptx.Presentation()
    topics = ["Aurora forecast", "Reindeer herding", "Midnight sun"]
    for i, topic in enumerate(topics, start=1):
        s = p.slides.add_slide(p.slide_layouts[1])
        s.shapes.title.text = topic
        s.placeholders[1].text = f"Slide {i} body: facts about {topic.lower()}."
        s.notes_slide.notes_text_frame.text = f"Say that slide {i} was researched in Inari."
    p.slides[1].placeholders[1].text = "Herders move the reindeer to summer pastures in May."
    p.save(path)
    return path


def make_odt(path: Path) -> Path:
    from odf import table
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P

    d = OpenDocumentText()
    d.text.addElement(H(outlinelevel=1, text="Harbour report"))
    d.text.addElement(P(text="The ferry to Suomenlinna leaves every forty minutes."))
    d.text.addElement(H(outlinelevel=2, text="Winter"))
    d.text.addElement(P(text="Ice breakers keep the channel open in January."))
    t = table.Table(name="Ships")
    for row in (["Ship", "Tonnage"], ["Urho", "9500"]):
        tr = table.TableRow()
        t.addElement(tr)
        for v in row:
            c = table.TableCell()
            c.addElement(P(text=v))
            tr.addElement(c)
    d.text.addElement(t)
    d.save(str(path))
    return path


def make_ods(path: Path) -> Path:
    from odf import table
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.text import P

    s = OpenDocumentSpreadsheet()
    t = table.Table(name="Ledger")
    for row in (["Account", "Balance"], ["Savings", "1500"], ["Boat fund", "230"]):
        tr = table.TableRow()
        t.addElement(tr)
        for v in row:
            c = table.TableCell(valuetype="string")
            c.addElement(P(text=v))
            tr.addElement(c)
    # what spreadsheet programs write for the empty rest of a sheet
    tr = table.TableRow(numberrowsrepeated=1048000)
    tr.addElement(table.TableCell(numbercolumnsrepeated=16384))
    t.addElement(tr)
    s.spreadsheet.addElement(t)
    s.save(str(path))
    return path


def make_odp(path: Path) -> Path:
    from odf import draw, presentation
    from odf.namespaces import PRESENTATIONNS
    from odf.opendocument import OpenDocumentPresentation
    from odf.text import P

    p = OpenDocumentPresentation()
    for i, (title, body) in enumerate([("Volcanoes", "Magma chambers lie kilometres deep."),
                                       ("Geysers", "Strokkur erupts every few minutes.")]):  # fmt: skip
        page = draw.Page(name=f"p{i}", masterpagename="")
        for cls, text in (("title", title), (None, body)):
            f = draw.Frame(width="20cm", height="3cm", x="1cm", y=f"{1 + 4 * (cls is None)}cm")
            if cls:
                f.setAttrNS(PRESENTATIONNS, "class", cls)
            tb = draw.TextBox()
            tb.addElement(P(text=text))
            f.addElement(tb)
            page.addElement(f)
        notes = presentation.Notes()
        f = draw.Frame(width="20cm", height="10cm", x="1cm", y="5cm")
        tb = draw.TextBox()
        tb.addElement(P(text=f"Speaker: slide {i + 1} needs the Iceland photo."))
        f.addElement(tb)
        notes.addElement(f)
        page.addElement(notes)
        p.presentation.addElement(page)
    p.save(str(path))
    return path


def make_eml(path: Path, attachment: Path | None = None) -> Path:
    m = EmailMessage()
    m["From"] = "Aino Virtanen <aino@example.org>"
    m["To"] = "Veikko <veikko@example.org>"
    m["Subject"] = "Sauna schedule"
    m["Date"] = "Tue, 01 Dec 2026 10:00:00 +0200"
    m.set_content("The sauna is heated every Thursday at six.\n\nBring your own towel.\n")
    if attachment is not None:
        m.add_attachment(attachment.read_bytes(), maintype="application",
                         subtype="octet-stream", filename=attachment.name)  # fmt: skip
    path.write_bytes(m.as_bytes())
    return path


def make_mbox(path: Path) -> Path:
    out = io.BytesIO()
    for i, (subject, body, html) in enumerate([
        ("Lighthouse log", "The lamp was cleaned on Sunday.", False),
        ("Lake report", "<html><body><p>The lake froze on <b>Monday</b>.</p></body></html>", True),
    ]):  # fmt: skip
        m = EmailMessage()
        m["From"] = f"keeper{i}@example.org"
        m["Subject"] = subject
        if html:
            m.set_content(body, subtype="html")
        else:
            m.set_content(body)
        out.write(f"From keeper{i}@example.org Tue Dec  1 10:00:00 2026\n".encode())
        out.write(m.as_bytes().replace(b"\nFrom ", b"\n>From ") + b"\n")
    path.write_bytes(out.getvalue())
    return path


def make_rtf(path: Path) -> Path:
    path.write_text(
        r"{\rtf1\ansi{\fonttbl\f0\fswiss Helvetica;}\f0\pard "
        r"Glaciers in {\b Svalbard} retreat every year.\par Second paragraph.\par}"
    )
    return path


def make_all(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "docx": make_docx(folder / "plan.docx"),
        "xlsx": make_xlsx(folder / "budget.xlsx"),
        "pptx": make_pptx(folder / "deck.pptx"),
        "odt": make_odt(folder / "harbour.odt"),
        "ods": make_ods(folder / "ledger.ods"),
        "odp": make_odp(folder / "volcano.odp"),
        "mbox": make_mbox(folder / "keepers.mbox"),
        "rtf": make_rtf(folder / "glaciers.rtf"),
    }
    files["eml"] = make_eml(folder / "sauna.eml", attachment=files["docx"])
    files["csv"] = folder / "towns.csv"
    files["csv"].write_text("name,town\nAino,Turku\nVeikko,Oulu\n")
    files["code"] = folder / "sessions.py"
    files["code"].write_text(CODE)
    return files
