# A family's one input where each of its jobs would name every file of a kind that the other
# family writes (every shard's, or every hash range's): a folder that one local job collects them
# in (contracts.tables.collect_files). Snakemake plans an input by finding its producer and then
# scanning that job's inputs for it (DAG.update): P jobs naming N files each are N·P edges, and
# N²·P scans when the producers name every shard's file too; through the folder they are N + P
# edges, and each job's one edge scans the collecting job's N inputs. The folder is temp(),
# deleted once the jobs that read it are done, the files with it: a temp() file that only the
# collecting job named would be deleted before they run. A folder of files that are kept anyway
# is kept too where its readers' reruns follow its date (`kept`: an ancient() input). Under a
# default storage provider the jobs name the files themselves (rules/common.smk, collected) and
# these rules never run. A script, not a `run:` block: Snakemake spawns a `run:` block as a
# Snakemake process of its own, which reads the whole workflow again (~2.2 CPU-s a job, against
# ~0.4 for the script; 6383ca1 had it the other way round).
for collect_rule, (collect_folder, collect_kinds, kept) in COLLECT.items():

    rule:
        name:
            collect_rule
        input:
            **collect_kinds,
        output:
            folder=(
                directory(collect_folder) if kept else temp(directory(collect_folder))
            ),
        log:
            f"logs/collect/{collect_rule}.log",
        localrule: True
        conda:
            "../envs/dedup.yaml"
        threads: 1
        resources:
            mem_mb=200,
        script:
            "../scripts/collect.py"
