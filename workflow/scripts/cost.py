"""Write results/<version>/cost.{csv,md,pdf,png} from every benchmark file of the run."""
from irrepro.core.cost import benchmark_files, cost_table, plot_cost, read_benchmarks
from irrepro.core.figures import save
from irrepro.core.io import write_table
from irrepro.core.logs import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    roots = list(sm.params.roots)
    jobs = read_benchmarks([p for r in roots for p in benchmark_files(r)], roots)
    table = cost_table(jobs)
    write_table(table, sm.output.csv, sm.output.md, float_format="%.3f")
    save(plot_cost(table), sm.output.pdf, sm.output.png)
    print(f"{len(jobs)} jobs in {len(table) - 1} rules, {table['wall_s'].iloc[-1]:.1f} s of wall time")
