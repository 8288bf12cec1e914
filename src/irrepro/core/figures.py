"""Figures. Each function takes frames and returns a matplotlib Figure; scripts save it as PDF and PNG."""


def save(fig, pdf, png):
    """Write ``fig`` as PDF (dated by SOURCE_DATE_EPOCH, not the clock) and a 150-dpi PNG, then close it."""
    import matplotlib.pyplot as plt

    fig.savefig(pdf, bbox_inches="tight")
    fig.savefig(png, dpi=150, bbox_inches="tight")
    plt.close(fig)
