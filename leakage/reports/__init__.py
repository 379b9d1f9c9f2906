"""Reports: the ``leakage.report/1`` models and their renderings."""

from leakage.reports._models import REPORT_FORMAT, Report, Step, Summary, report_seat
from leakage.reports._table import print_reports, report_table
from leakage.reports._write import ReportFormat, ReportWriter, open_report_writer

__all__ = [
    "REPORT_FORMAT",
    "Report",
    "ReportFormat",
    "ReportWriter",
    "Step",
    "Summary",
    "open_report_writer",
    "print_reports",
    "report_seat",
    "report_table",
]
