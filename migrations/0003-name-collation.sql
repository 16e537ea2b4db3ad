alter table countries alter column name type text collate "und-x-icu";
alter table languages alter column name type text collate "und-x-icu";
alter table genres alter column name type text collate "und-x-icu";
alter table subgenres alter column name type text collate "und-x-icu", alter column genre type text collate "und-x-icu";
alter table labels alter column name type text collate "und-x-icu";
alter table artists alter column stage_name type text collate "und-x-icu", alter column legal_name type text collate "und-x-icu", alter column city type text collate "und-x-icu", alter column country type text collate "und-x-icu";
alter table releases alter column release_title type text collate "und-x-icu", alter column release_version type text collate "und-x-icu", alter column label type text collate "und-x-icu", alter column genre type text collate "und-x-icu", alter column subgenre type text collate "und-x-icu", alter column language type text collate "und-x-icu";
alter table tracks alter column track_title type text collate "und-x-icu", alter column mix_version type text collate "und-x-icu", alter column genre type text collate "und-x-icu", alter column subgenre type text collate "und-x-icu";