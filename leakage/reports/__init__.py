"""Reports: the ``leakage.report/1`` models and their renderings."""

from leakage.reports._models import REPORT_FORMAT, Report, Step, Summary
from leakage.reports._table import print_reports, report_table

__all__ = ["REPORT_FORMAT", "Report", "Step", "Summary", "print_reports", "report_table"]
